package dev.llmlat.otlpkafka;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A batch of spans as the {@code otlp_spans} topic carries it: one encoded OTLP {@code
 * ExportTraceServiceRequest} per trace id, keyed by that trace id in hex (schemas/kafka/README.md).
 * Importers encode spans straight into this form, so a Kafka sink sends {@link #record(int)} as a
 * record value unchanged and nothing builds or copies message objects on the way; sinks that want
 * objects parse with {@link #requests()}.
 */
public final class SpanBatch {
  private static final HexFormat HEX = HexFormat.of();

  private final List<String> traceIds;
  private final List<byte[]> records;
  private final int spanCount;

  private SpanBatch(List<String> traceIds, List<byte[]> records, int spanCount) {
    this.traceIds = traceIds;
    this.records = records;
    this.spanCount = spanCount;
  }

  /**
   * A batch of records already encoded; {@code records.get(i)} must be an {@code
   * ExportTraceServiceRequest} whose spans all carry trace id {@code traceIds.get(i)}. The arrays
   * are taken as they are, not copied.
   */
  public static SpanBatch ofEncoded(List<String> traceIds, List<byte[]> records, int spanCount) {
    if (traceIds.size() != records.size()) {
      throw new IllegalArgumentException(
          traceIds.size() + " trace ids for " + records.size() + " records");
    }
    return new SpanBatch(
        Collections.unmodifiableList(traceIds), Collections.unmodifiableList(records), spanCount);
  }

  /**
   * Splits {@code request} into one record per trace id, keeping each span's resource and scope.
   */
  public static SpanBatch of(ExportTraceServiceRequest request) {
    Objects.requireNonNull(request, "request");
    Map<String, ExportTraceServiceRequest.Builder> byTrace = new LinkedHashMap<>();
    int spans = 0;
    for (ResourceSpans rs : request.getResourceSpansList()) {
      for (ScopeSpans ss : rs.getScopeSpansList()) {
        Map<String, List<Span>> scoped = new LinkedHashMap<>();
        for (Span span : ss.getSpansList()) {
          scoped
              .computeIfAbsent(
                  HEX.formatHex(span.getTraceId().toByteArray()), k -> new ArrayList<>())
              .add(span);
          spans++;
        }
        scoped.forEach(
            (traceId, list) ->
                byTrace
                    .computeIfAbsent(traceId, k -> ExportTraceServiceRequest.newBuilder())
                    .addResourceSpans(
                        ResourceSpans.newBuilder()
                            .setResource(rs.getResource())
                            .setSchemaUrl(rs.getSchemaUrl())
                            .addScopeSpans(
                                ScopeSpans.newBuilder()
                                    .setScope(ss.getScope())
                                    .setSchemaUrl(ss.getSchemaUrl())
                                    .addAllSpans(list))));
      }
    }
    List<String> ids = new ArrayList<>(byTrace.size());
    List<byte[]> values = new ArrayList<>(byTrace.size());
    byTrace.forEach(
        (traceId, b) -> {
          ids.add(traceId);
          values.add(b.build().toByteArray());
        });
    return ofEncoded(ids, values, spans);
  }

  /** How many records (distinct trace ids) the batch holds. */
  public int recordCount() {
    return records.size();
  }

  /** The trace id, 32 lowercase hex digits, of record {@code i}: its Kafka key. */
  public String traceId(int i) {
    return traceIds.get(i);
  }

  /**
   * Record {@code i}, an encoded {@code ExportTraceServiceRequest}; shared, not a copy: do not
   * modify.
   */
  public byte[] record(int i) {
    return records.get(i);
  }

  public int spanCount() {
    return spanCount;
  }

  /** Total encoded size of all records. */
  public long byteSize() {
    long n = 0;
    for (byte[] r : records) {
      n += r.length;
    }
    return n;
  }

  /** Every record parsed, in order. */
  public List<ExportTraceServiceRequest> requests() {
    List<ExportTraceServiceRequest> out = new ArrayList<>(records.size());
    for (int i = 0; i < records.size(); i++) {
      try {
        out.add(ExportTraceServiceRequest.parseFrom(records.get(i)));
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalStateException(
            "record "
                + i
                + " of a span batch (trace "
                + traceIds.get(i)
                + ") is not an ExportTraceServiceRequest: "
                + e.getMessage(),
            e);
      }
    }
    return out;
  }

  /** Every span of every record, in order. */
  public List<Span> spans() {
    List<Span> out = new ArrayList<>(spanCount);
    for (ExportTraceServiceRequest r : requests()) {
      for (ResourceSpans rs : r.getResourceSpansList()) {
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          out.addAll(ss.getSpansList());
        }
      }
    }
    return out;
  }
}
