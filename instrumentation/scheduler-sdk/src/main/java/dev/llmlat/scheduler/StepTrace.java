package dev.llmlat.scheduler;

import static dev.llmlat.scheduler.SchedulerAttributes.*;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One running engine step: its {@code step} span and the {@code prefill} chunk spans it opened.
 * {@link #end} closes them and records the tokens the step produced (one per decode request, one
 * per request whose prefill it completed). Used by the scheduler thread only.
 */
public final class StepTrace {
  private final List<StepBuilder.Entry> entries;
  private final Span span;
  private final NvtxRange nvtx;
  private final long startNanos;
  private final long index;
  private final int prefillTokens;
  private final int decodeTokens;
  private final List<Span> chunks;
  private final List<SpanContext> requests;
  private boolean ended;

  StepTrace(SchedulerTracer owner, List<StepBuilder.Entry> entries, long startNanos) {
    this.entries = entries;
    this.startNanos = startNanos;
    this.index = owner.nextStepIndex();
    int prefill = 0;
    int decode = 0;
    List<SpanContext> served = new ArrayList<>(entries.size());
    List<String> traceIds = new ArrayList<>(entries.size());
    for (StepBuilder.Entry e : entries) {
      prefill += e.prefillTokens();
      decode += e.decode() ? 1 : 0;
      served.add(e.request().spanContext());
      traceIds.add(e.request().traceId());
    }
    this.prefillTokens = prefill;
    this.decodeTokens = decode;
    this.requests = Collections.unmodifiableList(served);
    StepKind kind = StepKind.of(prefill, decode);

    // A step serves many traces but a span has one: it takes the first request's (as the GPU step
    // span does, schemas/kafka/README.md) so it lands in that trace's Kafka partition, and links
    // every request it served, the first included.
    SpanBuilder builder =
        owner
            .tracer()
            .spanBuilder(SPAN_STEP)
            .setParent(Context.root().with(Span.wrap(served.get(0))))
            .setStartTimestamp(startNanos, TimeUnit.NANOSECONDS)
            .setAttribute(STEP_INDEX, index)
            .setAttribute(STEP_KIND, kind.value())
            .setAttribute(STEP_BATCH_SIZE, (long) entries.size())
            .setAttribute(STEP_PREFILL_TOKENS, (long) prefill)
            .setAttribute(STEP_DECODE_TOKENS, (long) decode);
    for (StepBuilder.Entry e : entries) {
      builder.addLink(
          e.request().spanContext(),
          Attributes.of(
              STEP_PREFILL_TOKENS,
              (long) e.prefillTokens(),
              STEP_DECODE_TOKENS,
              e.decode() ? 1L : 0L));
    }
    this.span = builder.startSpan();
    this.nvtx = new NvtxRange(span.getSpanContext().getSpanId(), kind, traceIds);
    span.setAttribute(TRACE_IDS, nvtx.traceIds());
    span.setAttribute(NVTX_TEXT, nvtx.text());

    List<Span> opened = new ArrayList<>(entries.size());
    for (StepBuilder.Entry e : entries) {
      if (e.prefillTokens() > 0) {
        opened.add(
            e.request().startPrefillChunk(e.prefillTokens(), span.getSpanContext(), startNanos));
      } else {
        opened.add(null);
        e.request().scheduled(startNanos);
      }
    }
    this.chunks = opened;
  }

  /** The step span's context: the GPU step span's parent and the id in the NVTX text. */
  public SpanContext spanContext() {
    return span.getSpanContext();
  }

  /** The NVTX range to push around this step's GPU work. */
  public NvtxRange nvtxRange() {
    return nvtx;
  }

  public StepKind kind() {
    return nvtx.kind();
  }

  /** Monotonic step number of the tracer. */
  public long index() {
    return index;
  }

  public int batchSize() {
    return entries.size();
  }

  public int prefillTokens() {
    return prefillTokens;
  }

  public int decodeTokens() {
    return decodeTokens;
  }

  public long startEpochNanos() {
    return startNanos;
  }

  /** The {@code llm_request} span contexts of the requests served, in batch order. */
  public List<SpanContext> requests() {
    return requests;
  }

  /**
   * The scheduler's state when this step was scheduled, so the analyzer can name the limit that
   * kept waiting requests out ("KV cache 97% full", "batch at max_num_seqs 256"); -1 leaves a value
   * out.
   */
  public StepTrace schedulerState(
      long running,
      long waiting,
      long kvBlocksUsed,
      long kvBlocksTotal,
      long tokenBudget,
      long maxSeqs) {
    long[] values = {running, waiting, kvBlocksUsed, kvBlocksTotal, tokenBudget, maxSeqs};
    String[] keys = {
      dev.llmlat.semconv.LlmlatAttributes.SCHEDULER_RUNNING,
      dev.llmlat.semconv.LlmlatAttributes.SCHEDULER_WAITING,
      dev.llmlat.semconv.LlmlatAttributes.SCHEDULER_KV_BLOCKS_USED,
      dev.llmlat.semconv.LlmlatAttributes.SCHEDULER_KV_BLOCKS_TOTAL,
      dev.llmlat.semconv.LlmlatAttributes.SCHEDULER_TOKEN_BUDGET,
      dev.llmlat.semconv.LlmlatAttributes.SCHEDULER_MAX_SEQS
    };
    for (int i = 0; i < keys.length; i++) {
      if (values[i] >= 0) {
        span.setAttribute(keys[i], values[i]);
      }
    }
    return this;
  }

  /** The underlying span, for engine-specific attributes. */
  public Span span() {
    return span;
  }

  /** Ends the step at {@code epochNanos}: see {@link StepTrace}. */
  public void end(long epochNanos) {
    if (ended) {
      throw new IllegalStateException("step " + index + " already ended");
    }
    ended = true;
    long duration = Math.max(0, epochNanos - startNanos);
    for (int i = 0; i < entries.size(); i++) {
      StepBuilder.Entry e = entries.get(i);
      e.request().served(startNanos, duration);
      if (e.prefillTokens() > 0) {
        e.request().endPrefillChunk(chunks.get(i), e.prefillTokens(), epochNanos);
      } else {
        e.request().decoded(epochNanos);
      }
    }
    span.end(epochNanos, TimeUnit.NANOSECONDS);
  }
}
