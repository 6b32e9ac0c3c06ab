package dev.llmlat.scheduler;

import static dev.llmlat.scheduler.SchedulerAttributes.*;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One request's trace in the engine: its {@code llm_request} span and the {@code queue}, {@code
 * prefill} and {@code decode} spans under it. The engine reports queueing, preemption and the end;
 * prefill chunks and tokens are recorded by the {@link StepTrace}s that serve the request. Methods
 * are synchronized: the engine may abort a request from a request thread while the scheduler thread
 * steps it. Calls after the request ended are ignored.
 */
public final class RequestTrace {
  private final SchedulerTracer owner;
  private final RequestInfo info;
  private final Span span;
  private final Context context;
  private final long arrivalNanos;

  private Span queueSpan;
  private long queueStartNanos;
  private long firstQueuedNanos = -1;
  private long queueTotalNanos;
  private long firstScheduledNanos = -1;

  private int prefillTarget;
  private int prefilled;
  private int chunks;
  private boolean recompute;

  private int generated;
  private long firstTokenNanos = -1;
  private long lastTokenNanos = -1;
  private Span decodeSpan;
  private long[] decodeTimes = new long[16];
  private int decodeCount;

  private int preemptions;
  private long stepNanos;
  private boolean ended;

  RequestTrace(SchedulerTracer owner, RequestInfo info, Context parent, long arrivalNanos) {
    this.owner = owner;
    this.info = info;
    this.arrivalNanos = arrivalNanos;
    this.prefillTarget = info.promptTokens();
    this.span =
        owner
            .tracer()
            .spanBuilder(SPAN_REQUEST)
            .setParent(parent)
            .setSpanKind(SpanKind.SERVER) // as vLLM: the engine serves the gateway's client span
            .setStartTimestamp(arrivalNanos, TimeUnit.NANOSECONDS)
            .setAttribute(GEN_AI_OPERATION_NAME, info.operation())
            .setAttribute(GEN_AI_REQUEST_ID, info.requestId())
            .setAttribute(GEN_AI_REQUEST_MODEL, info.model())
            .setAttribute(GEN_AI_REQUEST_MAX_TOKENS, (long) info.maxTokens())
            .setAttribute(GEN_AI_USAGE_INPUT_TOKENS, (long) info.promptTokens())
            .setAttribute(GEN_AI_USAGE_PROMPT_TOKENS, (long) info.promptTokens())
            .startSpan();
    this.context = parent.with(span);
  }

  public RequestInfo info() {
    return info;
  }

  /** The {@code llm_request} span's context: its trace id is the request's trace. */
  public SpanContext spanContext() {
    return span.getSpanContext();
  }

  public String traceId() {
    return span.getSpanContext().getTraceId();
  }

  /** Enters the waiting queue now. */
  public void queued() {
    queued(owner.clock().now());
  }

  /** Enters the waiting queue: starts a {@code queue} span, ended when a step first serves it. */
  public synchronized void queued(long epochNanos) {
    if (ended || queueSpan != null) {
      return;
    }
    queueSpan =
        owner
            .tracer()
            .spanBuilder(SPAN_QUEUE)
            .setParent(context)
            .setStartTimestamp(epochNanos, TimeUnit.NANOSECONDS)
            .setAttribute(QUEUE_REQUEUED, preemptions > 0)
            .startSpan();
    queueStartNanos = epochNanos;
    if (firstQueuedNanos < 0) {
      firstQueuedNanos = epochNanos;
    }
  }

  /** Preempted now: see {@link #preempted(String, long)}. */
  public void preempted(String reason) {
    preempted(reason, owner.clock().now());
  }

  /**
   * The engine evicted the request (e.g. the KV cache ran out) and re-queues it: records an {@code
   * llmlat.preempted} event and starts a new {@code queue} span. Its KV is recomputed: the next
   * prefill covers the prompt and the tokens generated so far, and its last chunk yields the next
   * token.
   */
  public synchronized void preempted(String reason, long epochNanos) {
    if (ended) {
      return;
    }
    span.addEvent(
        EVENT_PREEMPTED,
        Attributes.of(
            PREEMPTION_REASON,
            reason == null ? "unspecified" : reason,
            PREEMPTION_GENERATED_TOKENS,
            (long) generated),
        epochNanos,
        TimeUnit.NANOSECONDS);
    preemptions++;
    prefilled = 0;
    prefillTarget = info.promptTokens() + generated;
    recompute = generated > 0;
    queued(epochNanos);
  }

  /** Ends the request now. */
  public void finish(FinishReason reason) {
    finish(reason, owner.clock().now());
  }

  /** Ends the request: closes open spans, writes token counts and vLLM's latency breakdown. */
  public synchronized void finish(FinishReason reason, long epochNanos) {
    end(reason, null, epochNanos);
  }

  /** Aborts the request now. */
  public void abort(String errorType) {
    abort(errorType, owner.clock().now());
  }

  /** Ends the request as aborted (client gone, engine error): status ERROR, {@code error.type}. */
  public synchronized void abort(String errorType, long epochNanos) {
    end(FinishReason.ABORT, errorType == null ? "aborted" : errorType, epochNanos);
  }

  public synchronized int generatedTokens() {
    return generated;
  }

  /** Tokens still to prefill before the request produces its next token. */
  public synchronized int prefillRemaining() {
    return prefillTarget - prefilled;
  }

  public synchronized boolean isPrefillDone() {
    return prefilled >= prefillTarget;
  }

  public synchronized int preemptions() {
    return preemptions;
  }

  public synchronized boolean isEnded() {
    return ended;
  }

  // Called by StepTrace on the scheduler thread.

  synchronized void scheduled(long epochNanos) {
    if (queueSpan != null) {
      queueSpan.end(epochNanos, TimeUnit.NANOSECONDS);
      queueTotalNanos += Math.max(0, epochNanos - queueStartNanos);
      queueSpan = null;
    }
    if (firstScheduledNanos < 0) {
      firstScheduledNanos = epochNanos;
    }
  }

  synchronized Span startPrefillChunk(int tokens, SpanContext step, long startNanos) {
    if (tokens < 1 || tokens > prefillRemaining()) {
      throw new IllegalArgumentException(
          "request "
              + info.requestId()
              + " has "
              + prefillRemaining()
              + " tokens left to prefill, a chunk of "
              + tokens
              + " does not fit");
    }
    scheduled(startNanos);
    return owner
        .tracer()
        .spanBuilder(SPAN_PREFILL)
        .setParent(context)
        .setStartTimestamp(startNanos, TimeUnit.NANOSECONDS)
        .addLink(step)
        .setAttribute(PREFILL_CHUNK_INDEX, (long) chunks++)
        .setAttribute(PREFILL_START_TOKEN, (long) prefilled)
        .setAttribute(PREFILL_TOKENS, (long) tokens)
        .setAttribute(PREFILL_RECOMPUTE, recompute)
        .setAttribute(STEP_SPAN_ID, step.getSpanId())
        .startSpan();
  }

  synchronized void endPrefillChunk(Span chunk, int tokens, long endNanos) {
    chunk.end(endNanos, TimeUnit.NANOSECONDS);
    if (ended) {
      return;
    }
    prefilled += tokens;
    if (prefilled >= prefillTarget) {
      recompute = false;
      token(endNanos); // sampling follows the last chunk's forward pass
    }
  }

  synchronized void decoded(long endNanos) {
    if (!ended) {
      token(endNanos);
    }
  }

  synchronized void served(long stepStartNanos, long stepDurationNanos) {
    scheduled(stepStartNanos);
    stepNanos += stepDurationNanos;
  }

  synchronized boolean canDecode() {
    return !ended && firstTokenNanos >= 0 && prefilled >= prefillTarget;
  }

  /** Decode token times so far (Unix ns), for tests and engines that report inter-token latency. */
  public synchronized long[] decodeTokenTimes() {
    return Arrays.copyOf(decodeTimes, decodeCount);
  }

  private void token(long epochNanos) {
    generated++;
    lastTokenNanos = epochNanos;
    if (firstTokenNanos < 0) {
      firstTokenNanos = epochNanos;
      span.addEvent(EVENT_FIRST_TOKEN, epochNanos, TimeUnit.NANOSECONDS);
      decodeSpan =
          owner
              .tracer()
              .spanBuilder(SPAN_DECODE)
              .setParent(context)
              .setStartTimestamp(epochNanos, TimeUnit.NANOSECONDS)
              .startSpan();
      return;
    }
    if (decodeCount == decodeTimes.length) {
      decodeTimes = Arrays.copyOf(decodeTimes, decodeCount * 2);
    }
    decodeTimes[decodeCount++] = epochNanos;
  }

  private void end(FinishReason reason, String errorType, long epochNanos) {
    if (ended) {
      return;
    }
    ended = true;
    if (queueSpan != null) {
      queueSpan.end(epochNanos, TimeUnit.NANOSECONDS);
      queueTotalNanos += Math.max(0, epochNanos - queueStartNanos);
      queueSpan = null;
    }
    if (decodeSpan != null) {
      List<Long> deltas = DecodeTokenTimes.encode(firstTokenNanos, decodeTimes, decodeCount);
      decodeSpan.setAttribute(DECODE_TOKENS, (long) decodeCount);
      decodeSpan.setAttribute(DECODE_TOKEN_DELTAS_NS, deltas);
      decodeSpan.end(lastTokenNanos, TimeUnit.NANOSECONDS);
    }
    span.setAttribute(GEN_AI_RESPONSE_MODEL, info.model());
    span.setAttribute(GEN_AI_USAGE_OUTPUT_TOKENS, (long) generated);
    span.setAttribute(GEN_AI_USAGE_COMPLETION_TOKENS, (long) generated);
    span.setAttribute(GEN_AI_RESPONSE_FINISH_REASONS, List.of(reason.value()));
    span.setAttribute(REQUEST_PREEMPTIONS, (long) preemptions);
    span.setAttribute(QUEUE_TOTAL_NS, queueTotalNanos);
    span.setAttribute(LATENCY_E2E, seconds(epochNanos - arrivalNanos));
    span.setAttribute(LATENCY_TIME_IN_SCHEDULER, seconds(stepNanos));
    if (firstScheduledNanos >= 0) {
      span.setAttribute(
          LATENCY_TIME_IN_QUEUE, seconds(firstScheduledNanos - firstQueuedOr(arrivalNanos)));
    }
    if (firstTokenNanos >= 0) {
      span.setAttribute(LATENCY_TIME_TO_FIRST_TOKEN, seconds(firstTokenNanos - arrivalNanos));
      span.setAttribute(
          LATENCY_TIME_IN_MODEL_PREFILL, seconds(firstTokenNanos - firstScheduledNanos));
      span.setAttribute(LATENCY_TIME_IN_MODEL_DECODE, seconds(lastTokenNanos - firstTokenNanos));
      span.setAttribute(
          LATENCY_TIME_IN_MODEL_INFERENCE, seconds(lastTokenNanos - firstScheduledNanos));
    }
    if (errorType != null) {
      span.setAttribute(ERROR_TYPE, errorType);
      span.setStatus(StatusCode.ERROR, errorType);
    }
    span.end(epochNanos, TimeUnit.NANOSECONDS);
  }

  private long firstQueuedOr(long fallback) {
    return firstQueuedNanos >= 0 ? firstQueuedNanos : fallback;
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }
}
