package dev.llmlat.metrics;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatMetrics;
import dev.llmlat.semconv.TtftComponent;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleCounter;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceId;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;

/**
 * Records each attribution on the instruments of {@link LlmlatMetrics}: its TTFT, every component,
 * every inter-token gap, the objectives it missed and its queue by cause, under the request's
 * service, model, engine instance and tenant (empty ones left out). The measurements carry the
 * request's trace as their context, so the SDK's trace-based exemplars name real requests.
 * Thread-safe (the SDK's instruments are); record an attribution once, or it is counted twice.
 */
public final class AttributionRecorder {
  /** The instrumentation scope of the instruments. */
  public static final String SCOPE = "dev.llmlat.metrics";

  private static final AttributeKey<String> SERVICE = AttributeKey.stringKey(LlmlatMetrics.SERVICE);
  private static final AttributeKey<String> MODEL = AttributeKey.stringKey(LlmlatMetrics.MODEL);
  private static final AttributeKey<String> ENGINE_INSTANCE =
      AttributeKey.stringKey(LlmlatMetrics.ENGINE_INSTANCE);
  private static final AttributeKey<String> TENANT =
      AttributeKey.stringKey(LlmlatAttributes.TENANT);
  private static final AttributeKey<String> COMPONENT =
      AttributeKey.stringKey(LlmlatMetrics.COMPONENT);
  private static final AttributeKey<String> OBJECTIVE =
      AttributeKey.stringKey(LlmlatMetrics.SLO_OBJECTIVE);
  private static final AttributeKey<String> QUEUE_CAUSE =
      AttributeKey.stringKey(LlmlatMetrics.QUEUE_CAUSE);
  private static final double NANOS_PER_SECOND = 1e9;

  private final SloThresholds slo;
  private final DoubleHistogram ttft;
  private final DoubleHistogram components;
  private final DoubleHistogram itl;
  private final LongCounter violations;
  private final DoubleCounter queue;

  /**
   * Instruments of {@code meter} (whose provider should have {@link AttributionViews} registered).
   */
  public AttributionRecorder(Meter meter, SloThresholds slo) {
    this.slo = slo;
    this.ttft =
        meter
            .histogramBuilder(LlmlatMetrics.TTFT)
            .setUnit(LlmlatMetrics.UNIT_SECONDS)
            .setDescription("Time to first token of attributed requests.")
            .build();
    this.components =
        meter
            .histogramBuilder(LlmlatMetrics.TTFT_COMPONENT)
            .setUnit(LlmlatMetrics.UNIT_SECONDS)
            .setDescription(
                "The components of attributed requests' TTFT, by component; they sum to TTFT.")
            .build();
    this.itl =
        meter
            .histogramBuilder(LlmlatMetrics.ITL)
            .setUnit(LlmlatMetrics.UNIT_SECONDS)
            .setDescription("Inter-token gaps of attributed requests.")
            .build();
    this.violations =
        meter
            .counterBuilder(LlmlatMetrics.SLO_VIOLATIONS)
            .setUnit(LlmlatMetrics.UNIT_REQUESTS)
            .setDescription("Attributed requests that missed an objective, by objective.")
            .build();
    this.queue =
        meter
            .counterBuilder(LlmlatMetrics.QUEUE_TIME)
            .ofDoubles()
            .setUnit(LlmlatMetrics.UNIT_SECONDS)
            .setDescription("Time attributed requests queued, by what the engine did meanwhile.")
            .build();
  }

  public void record(Attribution a) {
    Attributes request = dimensions(a);
    Context trace = exemplarContext(a.traceId());
    ttft.record(seconds(a.ttftNs()), request, trace);
    for (String component : TtftComponent.ids()) {
      components.record(
          seconds(a.component(component)), with(request, COMPONENT, component), trace);
    }
    long gapsNs = 0;
    for (Attribution.Gap gap : a.itl()) {
      itl.record(seconds(gap.gapNs()), request, trace);
      gapsNs += gap.gapNs();
    }
    if (a.ttftNs() > slo.ttft().toNanos()) {
      violations.add(1, with(request, OBJECTIVE, LlmlatMetrics.OBJECTIVE_TTFT), trace);
    }
    // the mean gap is TPOT, (last token - first token) / (tokens - 1); compared in whole ns as vLLM
    // does
    if (slo.tpot() != null
        && !a.itl().isEmpty()
        && gapsNs > slo.tpot().toNanos() * a.itl().size()) {
      violations.add(1, with(request, OBJECTIVE, LlmlatMetrics.OBJECTIVE_TPOT), trace);
    }
    for (QueueBreakdown.Part part : a.queueBreakdown().parts()) {
      queue.add(seconds(part.ns()), with(request, QUEUE_CAUSE, part.kind()), trace);
    }
  }

  /** The request's service, model, engine instance and tenant; an empty one is no attribute. */
  static Attributes dimensions(Attribution a) {
    AttributesBuilder b = Attributes.builder();
    put(b, SERVICE, a.service());
    put(b, MODEL, a.model());
    put(b, ENGINE_INSTANCE, a.engineInstance());
    put(b, TENANT, a.tenant());
    return b.build();
  }

  /**
   * A sampled span context of the request's trace, for the exemplars. An attribution is of the
   * whole request, not of one span, but a valid span context needs a span id: the trace id's low 64
   * bits (else its high ones) stand in. An id that is not a W3C trace id gives no exemplar.
   */
  static Context exemplarContext(String traceId) {
    if (traceId == null || !TraceId.isValid(traceId)) {
      return Context.root();
    }
    String spanId = traceId.substring(16);
    if (!SpanId.isValid(spanId)) {
      spanId = traceId.substring(0, 16);
    }
    return Context.root()
        .with(
            Span.wrap(
                SpanContext.create(
                    traceId, spanId, TraceFlags.getSampled(), TraceState.getDefault())));
  }

  private static void put(AttributesBuilder b, AttributeKey<String> key, String value) {
    if (value != null && !value.isEmpty()) {
      b.put(key, value);
    }
  }

  private static Attributes with(Attributes base, AttributeKey<String> key, String value) {
    return base.toBuilder().put(key, value).build();
  }

  private static double seconds(long ns) {
    return ns / NANOS_PER_SECOND;
  }
}
