package dev.llmlat.ingest.spans;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * Encodes OTLP spans as {@code RowBinary} rows of {@code otel_traces}, the way the Collector's
 * ClickHouse exporter maps them: hex ids, kind and status as words ({@code Server}, {@code Error}),
 * {@code service.name} lifted into {@code ServiceName}, attributes rendered by {@link
 * AttributeValues}.
 */
public final class OtelTracesRowEncoder extends RowBinaryBatch {
  public static final String TABLE = "otel_traces";

  /** The columns written, in order. */
  public static final List<String> COLUMNS =
      List.of(
          "Timestamp",
          "TraceId",
          "SpanId",
          "ParentSpanId",
          "TraceState",
          "SpanName",
          "SpanKind",
          "ServiceName",
          "ResourceAttributes",
          "ScopeName",
          "ScopeVersion",
          "SpanAttributes",
          "Duration",
          "StatusCode",
          "StatusMessage",
          "Events.Timestamp",
          "Events.Name",
          "Events.Attributes",
          "Links.TraceId",
          "Links.SpanId",
          "Links.TraceState",
          "Links.Attributes");

  private static final HexFormat HEX = HexFormat.of();

  public OtelTracesRowEncoder() {
    super(64 * 1024);
  }

  @Override
  String table() {
    return TABLE;
  }

  @Override
  List<String> columns() {
    return COLUMNS;
  }

  /** Appends every span of {@code request}. */
  public OtelTracesRowEncoder add(ExportTraceServiceRequest request) {
    for (ResourceSpans resourceSpans : request.getResourceSpansList()) {
      add(resourceSpans);
    }
    return this;
  }

  /** Appends every span of one resource. */
  public OtelTracesRowEncoder add(ResourceSpans resourceSpans) {
    Resource resource = resourceSpans.getResource();
    Map<String, String> resourceAttributes = AttributeValues.toMap(resource.getAttributesList());
    String serviceName = resourceAttributes.getOrDefault("service.name", "");
    for (ScopeSpans scopeSpans : resourceSpans.getScopeSpansList()) {
      for (Span span : scopeSpans.getSpansList()) {
        add(span, scopeSpans.getScope(), serviceName, resourceAttributes);
      }
    }
    return this;
  }

  /** Appends one span. */
  public OtelTracesRowEncoder add(
      Span span,
      InstrumentationScope scope,
      String serviceName,
      Map<String, String> resourceAttributes) {
    long start = span.getStartTimeUnixNano();
    long end = span.getEndTimeUnixNano();
    out.int64(start)
        .string(hex(span.getTraceId()))
        .string(hex(span.getSpanId()))
        .string(hex(span.getParentSpanId()))
        .string(span.getTraceState())
        .string(span.getName())
        .string(spanKind(span.getKind()))
        .string(serviceName)
        .stringMap(resourceAttributes)
        .string(scope.getName())
        .string(scope.getVersion())
        .stringMap(AttributeValues.toMap(span.getAttributesList()))
        .int64(end > start ? end - start : 0)
        .string(statusCode(span.getStatus().getCode()))
        .string(span.getStatus().getMessage());
    List<Span.Event> events = span.getEventsList();
    out.arrayLength(events.size());
    events.forEach(e -> out.int64(e.getTimeUnixNano()));
    out.arrayLength(events.size());
    events.forEach(e -> out.string(e.getName()));
    out.arrayLength(events.size());
    events.forEach(e -> out.stringMap(AttributeValues.toMap(e.getAttributesList())));
    List<Span.Link> links = span.getLinksList();
    out.arrayLength(links.size());
    links.forEach(l -> out.string(hex(l.getTraceId())));
    out.arrayLength(links.size());
    links.forEach(l -> out.string(hex(l.getSpanId())));
    out.arrayLength(links.size());
    links.forEach(l -> out.string(l.getTraceState()));
    out.arrayLength(links.size());
    links.forEach(l -> out.stringMap(AttributeValues.toMap(l.getAttributesList())));
    rows++;
    return this;
  }

  public static String hex(ByteString id) {
    return id.isEmpty() ? "" : HEX.formatHex(id.toByteArray());
  }

  /** The exporter's words for span kinds. */
  public static String spanKind(Span.SpanKind kind) {
    return switch (kind) {
      case SPAN_KIND_INTERNAL -> "Internal";
      case SPAN_KIND_SERVER -> "Server";
      case SPAN_KIND_CLIENT -> "Client";
      case SPAN_KIND_PRODUCER -> "Producer";
      case SPAN_KIND_CONSUMER -> "Consumer";
      default -> "Unspecified";
    };
  }

  /** The exporter's words for status codes. */
  public static String statusCode(Status.StatusCode code) {
    return switch (code) {
      case STATUS_CODE_OK -> "Ok";
      case STATUS_CODE_ERROR -> "Error";
      default -> "Unset";
    };
  }
}
