package dev.llmlat.ingest.spans;

import com.google.protobuf.ByteString;
import dev.llmlat.store.RowBinaryWriter;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Encodes OTLP spans as {@code RowBinary} rows of {@code otel_traces}, the way the Collector's
 * ClickHouse exporter maps them: hex ids, kind and status as words ({@code Server}, {@code Error}),
 * {@code service.name} lifted into {@code ServiceName}, attributes rendered by {@link
 * AttributeValues}.
 *
 * <p>The columns a resource and a scope give every span of theirs ({@code ServiceName} to {@code
 * ScopeVersion}, adjacent in {@link #COLUMNS}) are encoded once per scope ({@link
 * #resourceAndScope}) and copied into each row; attribute lists are written without building maps.
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
  private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  /** Above this many attributes a repeated key is looked for with a set, not pairwise. */
  private static final int PAIRWISE_KEY_CHECK = 24;

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
      RowBinaryWriter shared =
          resourceAndScope(serviceName, resourceAttributes, scopeSpans.getScope());
      for (Span span : scopeSpans.getSpansList()) {
        add(span, shared);
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
    return add(span, resourceAndScope(serviceName, resourceAttributes, scope));
  }

  /**
   * The columns {@code ServiceName}, {@code ResourceAttributes}, {@code ScopeName} and {@code
   * ScopeVersion} of every span of one resource and scope, encoded, for {@link #add(Span,
   * RowBinaryWriter)}.
   */
  static RowBinaryWriter resourceAndScope(
      String serviceName, Map<String, String> resourceAttributes, InstrumentationScope scope) {
    return new RowBinaryWriter(64 + 32 * resourceAttributes.size())
        .string(serviceName)
        .stringMap(resourceAttributes)
        .string(scope.getName())
        .string(scope.getVersion());
  }

  /**
   * Appends one span of the resource and scope {@code resourceAndScope} encodes ({@link
   * #resourceAndScope}).
   */
  OtelTracesRowEncoder add(Span span, RowBinaryWriter resourceAndScope) {
    long start = span.getStartTimeUnixNano();
    long end = span.getEndTimeUnixNano();
    out.int64(start);
    hex(out, span.getTraceId());
    hex(out, span.getSpanId());
    hex(out, span.getParentSpanId());
    out.string(span.getTraceState())
        .string(span.getName())
        .string(spanKind(span.getKind()))
        .append(resourceAndScope);
    attributes(out, span.getAttributesList());
    Status status = span.getStatus();
    out.int64(end > start ? end - start : 0)
        .string(statusCode(status.getCode()))
        .string(status.getMessage());
    List<Span.Event> events = span.getEventsList();
    int n = events.size();
    out.arrayLength(n);
    for (int i = 0; i < n; i++) {
      out.int64(events.get(i).getTimeUnixNano());
    }
    out.arrayLength(n);
    for (int i = 0; i < n; i++) {
      out.string(events.get(i).getName());
    }
    out.arrayLength(n);
    for (int i = 0; i < n; i++) {
      attributes(out, events.get(i).getAttributesList());
    }
    List<Span.Link> links = span.getLinksList();
    n = links.size();
    out.arrayLength(n);
    for (int i = 0; i < n; i++) {
      hex(out, links.get(i).getTraceId());
    }
    out.arrayLength(n);
    for (int i = 0; i < n; i++) {
      hex(out, links.get(i).getSpanId());
    }
    out.arrayLength(n);
    for (int i = 0; i < n; i++) {
      out.string(links.get(i).getTraceState());
    }
    out.arrayLength(n);
    for (int i = 0; i < n; i++) {
      attributes(out, links.get(i).getAttributesList());
    }
    rows++;
    return this;
  }

  /**
   * An attribute list as the {@code Map(String, String)} value {@link AttributeValues#toMap} would
   * make of it: in order, and a repeated key (rare; OTLP forbids it) in its first place with its
   * last value, which the map itself is left to do.
   */
  static void attributes(RowBinaryWriter out, List<KeyValue> attributes) {
    int n = attributes.size();
    if (hasRepeatedKey(attributes)) {
      out.stringMap(AttributeValues.toMap(attributes));
      return;
    }
    out.varUInt(n);
    for (int i = 0; i < n; i++) {
      KeyValue kv = attributes.get(i);
      out.string(kv.getKey()).string(AttributeValues.asString(kv.getValue()));
    }
  }

  private static boolean hasRepeatedKey(List<KeyValue> attributes) {
    int n = attributes.size();
    if (n > PAIRWISE_KEY_CHECK) {
      Set<String> keys = new HashSet<>(n * 2);
      for (int i = 0; i < n; i++) {
        if (!keys.add(attributes.get(i).getKey())) {
          return true;
        }
      }
      return false;
    }
    for (int i = 1; i < n; i++) {
      String key = attributes.get(i).getKey();
      for (int j = 0; j < i; j++) {
        if (key.equals(attributes.get(j).getKey())) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * {@link #hex(ByteString)} as a RowBinary string, without the intermediate strings: the writer
   * takes raw bytes only as numbers, so eight digits go as one little-endian Int64.
   */
  static void hex(RowBinaryWriter out, ByteString id) {
    int n = id.size();
    out.varUInt(2L * n);
    long word = 0;
    int digits = 0;
    for (int i = 0; i < n; i++) {
      int b = id.byteAt(i) & 0xFF;
      word |=
          (long) HEX_DIGITS[b >>> 4] << (8 * digits)
              | (long) HEX_DIGITS[b & 0xF] << (8 * (digits + 1));
      digits += 2;
      if (digits == 8) {
        out.int64(word);
        word = 0;
        digits = 0;
      }
    }
    for (int i = 0; i < digits; i++) {
      out.uint8((int) (word >>> (8 * i)));
    }
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
