package dev.llmlat.analyze.otlp;

import dev.llmlat.attribution.ResourceRule;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.ingest.spans.AttributeValues;
import dev.llmlat.ingest.spans.GpuKernelRowEncoder;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.semconv.CollectiveKernels;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * OTLP spans as {@link SpanRecord}s, exactly as the store path gives them: the ingester's row
 * encoding ({@link OtelTracesRowEncoder}, attribute values rendered by {@link AttributeValues})
 * read back by {@code TraceReader}. So attribution over spans straight off the span topic (live
 * attribution) sees what {@code analyze} sees: the same hex ids, kind words, host and process
 * instance chosen from the resource by the same rules, and of the per-kernel GPU spans (the
 * ingester routes those to {@code gpu_kernels}) only the collective kernels of GPU steps, as the
 * store path reads them from {@code gpu_collectives} to match a tensor-parallel step's ranks.
 */
public final class OtlpSpanRecords {
  private OtlpSpanRecords() {}

  /**
   * Every span of {@code request}, of the per-kernel GPU spans only the steps' collectives, in
   * order.
   */
  public static List<SpanRecord> of(ExportTraceServiceRequest request) {
    List<SpanRecord> out = new ArrayList<>();
    for (ResourceSpans resourceSpans : request.getResourceSpansList()) {
      addTo(resourceSpans, out);
    }
    return out;
  }

  /** Appends the spans of one resource to {@code out}. */
  public static void addTo(ResourceSpans resourceSpans, List<SpanRecord> out) {
    Resource resource = resourceSpans.getResource();
    Map<String, String> attributes = AttributeValues.toMap(resource.getAttributesList());
    String service = attributes.getOrDefault("service.name", "");
    String layer = attributes.getOrDefault(LlmlatAttributes.LAYER, "");
    String host = ResourceRule.HOST.of(attributes);
    String instance = ResourceRule.INSTANCE.of(attributes);
    for (ScopeSpans scopeSpans : resourceSpans.getScopeSpansList()) {
      String scope = scopeSpans.getScope().getName();
      for (Span span : scopeSpans.getSpansList()) {
        if (!GpuKernelRowEncoder.isKernelSpan(layer, span)) {
          out.add(record(span, service, layer, host, scope, instance));
        } else if (CollectiveKernels.matches(span.getName())) {
          SpanRecord collective =
              collective(span, attributes, service, layer, host, scope, instance);
          if (collective != null) {
            out.add(collective);
          }
        }
      }
    }
  }

  /**
   * A collective kernel of a GPU step as {@code TraceReader.collectives} gives it back from {@code
   * gpu_collectives}: under its step, named by its process and correlation id, with its kind,
   * device and process; null without a step.
   */
  private static SpanRecord collective(
      Span span,
      Map<String, String> resource,
      String service,
      String layer,
      String host,
      String scope,
      String instance) {
    String step = "";
    long device = 0;
    long correlation = 0;
    long pid = 0;
    try {
      pid = Long.parseLong(resource.getOrDefault("process.pid", "0"));
    } catch (NumberFormatException e) {
      pid = 0; // as the store's row encoding reads it
    }
    for (KeyValue kv : span.getAttributesList()) {
      switch (kv.getKey()) {
        case LlmlatAttributes.STEP_SPAN_ID -> step = kv.getValue().getStringValue();
        case LlmlatAttributes.GPU_DEVICE -> device = kv.getValue().getIntValue();
        case LlmlatAttributes.CUDA_CORRELATION_ID -> correlation = kv.getValue().getIntValue();
        case "process.pid" -> pid = kv.getValue().getIntValue();
        default -> {}
      }
    }
    if (step.isEmpty()) {
      return null;
    }
    long start = span.getStartTimeUnixNano();
    long end = Math.max(start, span.getEndTimeUnixNano());
    return new SpanRecord(
        OtelTracesRowEncoder.hex(span.getTraceId()),
        "k" + pid + "." + correlation,
        step,
        span.getName(),
        "Internal",
        service,
        layer,
        host,
        scope,
        instance,
        start,
        end,
        Map.of(
            LlmlatAttributes.GPU_KIND,
            "kernel",
            LlmlatAttributes.GPU_DEVICE,
            Long.toString(device),
            "process.pid",
            Long.toString(pid)),
        List.of(),
        List.of());
  }

  private static SpanRecord record(
      Span span, String service, String layer, String host, String scope, String instance) {
    long start = span.getStartTimeUnixNano();
    long end = span.getEndTimeUnixNano();
    List<SpanRecord.Event> events = new ArrayList<>(span.getEventsCount());
    for (Span.Event e : span.getEventsList()) {
      events.add(
          new SpanRecord.Event(
              e.getTimeUnixNano(), e.getName(), AttributeValues.toMap(e.getAttributesList())));
    }
    List<SpanRecord.Link> links = new ArrayList<>(span.getLinksCount());
    for (Span.Link l : span.getLinksList()) {
      links.add(
          new SpanRecord.Link(
              OtelTracesRowEncoder.hex(l.getTraceId()), OtelTracesRowEncoder.hex(l.getSpanId())));
    }
    // the store keeps a duration that is never negative (Duration = end > start ? end - start : 0)
    return new SpanRecord(
        OtelTracesRowEncoder.hex(span.getTraceId()),
        OtelTracesRowEncoder.hex(span.getSpanId()),
        OtelTracesRowEncoder.hex(span.getParentSpanId()),
        span.getName(),
        OtelTracesRowEncoder.spanKind(span.getKind()),
        service,
        layer,
        host,
        scope,
        instance,
        start,
        end > start ? end : start,
        AttributeValues.toMap(span.getAttributesList()),
        events,
        links);
  }
}
