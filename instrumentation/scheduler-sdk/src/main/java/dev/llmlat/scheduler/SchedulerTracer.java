package dev.llmlat.scheduler;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Traces an inference engine's scheduler. Per request ({@link #admit}) an {@code llm_request} span,
 * child of the caller's {@code traceparent}, with {@code queue}, {@code prefill} (one per chunk)
 * and {@code decode} children; per engine step ({@link #newStep}) a {@code step} span linked to
 * every request it served, and the NVTX range text that joins GPU exports back to both.
 *
 * <p>Every method has a form taking an explicit Unix-ns timestamp, for engines that measure time
 * themselves; the others read the configured clock. Thread-safe: requests may be admitted from
 * request threads while the scheduler thread drives steps.
 */
public final class SchedulerTracer {
  private final Tracer tracer;
  private final TextMapPropagator propagator;
  private final SchedulerClock clock;
  private final AtomicLong steps = new AtomicLong();

  SchedulerTracer(Tracer tracer, TextMapPropagator propagator, SchedulerClock clock) {
    this.tracer = tracer;
    this.propagator = propagator;
    this.clock = clock;
  }

  public static SchedulerTracerBuilder builder(OpenTelemetry openTelemetry) {
    return new SchedulerTracerBuilder(openTelemetry);
  }

  /** Starts the request's {@code llm_request} span now, under the trace its headers carry. */
  public RequestTrace admit(RequestInfo info, Map<String, String> headers) {
    return admit(info, headers, clock.now());
  }

  /**
   * Starts the request's {@code llm_request} span at {@code arrivalEpochNanos}, as a child of the
   * {@code traceparent} in {@code headers} (a new trace when there is none or it is malformed).
   */
  public RequestTrace admit(RequestInfo info, Map<String, String> headers, long arrivalEpochNanos) {
    return admit(info, extract(headers), arrivalEpochNanos);
  }

  /** Starts the request's span at {@code arrivalEpochNanos} as a child of {@code parent}. */
  public RequestTrace admit(RequestInfo info, Context parent, long arrivalEpochNanos) {
    Objects.requireNonNull(info, "info");
    Objects.requireNonNull(parent, "parent");
    return new RequestTrace(this, info, parent, arrivalEpochNanos);
  }

  /** The context the headers carry (only the propagated span context; nothing ambient). */
  public Context extract(Map<String, String> headers) {
    return propagator.extract(
        Context.root(), headers == null ? Map.of() : headers, HeaderGetter.INSTANCE);
  }

  /** Describes the next engine step: which requests it prefills and which it decodes. */
  public StepBuilder newStep() {
    return new StepBuilder(this);
  }

  public SchedulerClock clock() {
    return clock;
  }

  Tracer tracer() {
    return tracer;
  }

  long nextStepIndex() {
    return steps.getAndIncrement();
  }
}
