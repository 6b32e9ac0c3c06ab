package dev.llmlat.scheduler;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.Objects;

/** Configures a {@link SchedulerTracer}; obtain one from {@link SchedulerTracer#builder}. */
public final class SchedulerTracerBuilder {
  static final String INSTRUMENTATION_NAME = "dev.llmlat.scheduler";
  static final String INSTRUMENTATION_VERSION = "0.1.0";

  private final OpenTelemetry openTelemetry;
  // W3C by default rather than openTelemetry.getPropagators(): an SDK built without propagators
  // would silently drop the gateway's traceparent and every request would start its own trace.
  private TextMapPropagator propagator = W3CTraceContextPropagator.getInstance();
  private SchedulerClock clock = SchedulerClock.monotonic();

  SchedulerTracerBuilder(OpenTelemetry openTelemetry) {
    this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
  }

  /** How incoming request headers are read (default: W3C trace context). */
  public SchedulerTracerBuilder setPropagator(TextMapPropagator propagator) {
    this.propagator = Objects.requireNonNull(propagator, "propagator");
    return this;
  }

  /**
   * The clock for calls that take no explicit timestamp (default: {@link
   * SchedulerClock#monotonic()}).
   */
  public SchedulerTracerBuilder setClock(SchedulerClock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  public SchedulerTracer build() {
    return new SchedulerTracer(
        openTelemetry.getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION), propagator, clock);
  }
}
