package dev.llmlat.gpu.internal;

import com.google.protobuf.ByteString;
import dev.llmlat.otlpkafka.OtlpAttributes;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanSink;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Groups encoded spans under the GPU resource into one {@code ExportTraceServiceRequest} per trace
 * id, and hands them to the sink as a {@link SpanBatch} every {@code batchSize} spans. A span is
 * encoded once, into this batch's buffer ({@link #begin}), never becomes a message object, and is
 * copied once, into its trace's record, whose request around the spans is written from their
 * lengths. A trace's spans of one batch go in more than one record when they pass {@link
 * #MAX_RECORD_SPAN_BYTES} (Kafka refuses records over its 1 MB default).
 */
final class SpanRecords {
  static final InstrumentationScope SCOPE =
      InstrumentationScope.newBuilder()
          .setName("dev.llmlat.gpu-import")
          .setVersion("0.1.0")
          .build();
  private static final int REQUEST_RESOURCE_SPANS = ProtoWriter.lenTag(1);
  private static final int RESOURCE_SPANS_RESOURCE = ProtoWriter.lenTag(1);
  private static final int RESOURCE_SPANS_SCOPE_SPANS = ProtoWriter.lenTag(2);
  private static final int SCOPE_SPANS_SCOPE = ProtoWriter.lenTag(1);
  private static final int SCOPE_SPANS_SPANS = ProtoWriter.lenTag(2);
  private static final HexFormat HEX = HexFormat.of();

  /**
   * The most span bytes one record carries: half Kafka's default 1 MB limit, leaving room for long
   * names.
   */
  static final int MAX_RECORD_SPAN_BYTES = 512 * 1024;

  private final byte[] resource;
  private final byte[] scope;
  private final SpanSink sink;
  private final int batchSize;
  // This batch's spans, encoded back to back; span i ends at ends[i] and the next span of its trace
  // is next[i] (-1: none). A span is copied once, from here into its trace's record.
  private final ProtoWriter arena = new ProtoWriter(64 * 1024);
  private int[] ends = new int[256];
  private int[] next = new int[256];
  // The spans of this batch by trace, in order of first appearance (as the Kafka records go out).
  private final Map<ByteString, TraceSpans> open = new LinkedHashMap<>();
  // Records of this batch already at MAX_RECORD_SPAN_BYTES, in the order they filled up.
  private final List<TraceSpans> full = new ArrayList<>();
  // The trace of the previous span and its open spans: consecutive spans mostly share a trace.
  private ByteString lastTraceId;
  private TraceSpans lastTrace;
  private int pending;
  private long spans;
  private long batches;

  /**
   * One trace's spans in this batch: first and last span index, and their bytes as repeated fields.
   */
  private static final class TraceSpans {
    final ByteString traceId;
    final int first;
    int last;
    int fieldBytes;

    TraceSpans(ByteString traceId, int first) {
      this.traceId = traceId;
      this.first = first;
      this.last = first;
    }
  }

  SpanRecords(String serviceName, String hostName, int batchSize, SpanSink sink) {
    Resource.Builder r =
        Resource.newBuilder()
            .addAttributes(OtlpAttributes.string("service.name", serviceName))
            .addAttributes(
                OtlpAttributes.string(LlmlatAttributes.LAYER, LlmlatAttributes.LAYER_GPU));
    if (hostName != null) {
      r.addAttributes(OtlpAttributes.string(LlmlatAttributes.HOST_NAME, hostName));
    }
    this.resource = r.build().toByteArray();
    this.scope = SCOPE.toByteArray();
    this.sink = sink;
    this.batchSize = batchSize;
  }

  /** Where to encode the next span (a {@code Span} message body); then call {@link #end}. */
  ProtoWriter begin() {
    return arena;
  }

  /** Ends the span written since the last {@link #end} as one of trace {@code traceId}. */
  void end(ByteString traceId) {
    int i = pending;
    if (i == ends.length) {
      ends = Arrays.copyOf(ends, i * 2);
      next = Arrays.copyOf(next, i * 2);
    }
    int start = i == 0 ? 0 : ends[i - 1];
    int end = arena.size();
    ends[i] = end;
    next[i] = -1;
    int fieldBytes = 1 + ProtoWriter.varintSize(end - start) + end - start;
    TraceSpans t = traceId == lastTraceId ? lastTrace : open.get(traceId);
    if (t != null && t.fieldBytes + fieldBytes > MAX_RECORD_SPAN_BYTES) {
      full.add(t);
      t = null;
    }
    if (t == null) {
      t = new TraceSpans(traceId, i);
      open.put(traceId, t);
    } else {
      next[t.last] = i;
      t.last = i;
    }
    t.fieldBytes += fieldBytes;
    lastTraceId = traceId;
    lastTrace = t;
    spans++;
    if (++pending >= batchSize) {
      flush();
    }
  }

  /** Adds one encoded span (a {@code Span} message body) of trace {@code traceId}. */
  void add(ByteString traceId, byte[] span, int off, int len) {
    begin().raw(span, off, len);
    end(traceId);
  }

  void add(Span span) {
    byte[] b = span.toByteArray();
    add(span.getTraceId(), b, 0, b.length);
  }

  void flush() {
    if (pending == 0) {
      return;
    }
    List<String> traceIds = new ArrayList<>(full.size() + open.size());
    List<byte[]> records = new ArrayList<>(full.size() + open.size());
    full.addAll(open.values());
    for (TraceSpans t : full) {
      traceIds.add(HEX.formatHex(t.traceId.toByteArray()));
      records.add(request(t));
    }
    full.clear();
    open.clear();
    lastTraceId = null;
    lastTrace = null;
    arena.reset();
    int count = pending;
    pending = 0;
    batches++;
    sink.accept(SpanBatch.ofEncoded(traceIds, records, count));
  }

  /** ExportTraceServiceRequest { resource_spans { resource, scope_spans { scope, spans... } } }. */
  private byte[] request(TraceSpans t) {
    int spansLen = t.fieldBytes;
    int scopeSpansLen = 1 + ProtoWriter.varintSize(scope.length) + scope.length + spansLen;
    int resourceSpansLen =
        1
            + ProtoWriter.varintSize(resource.length)
            + resource.length
            + 1
            + ProtoWriter.varintSize(scopeSpansLen)
            + scopeSpansLen;
    ProtoWriter w =
        new ProtoWriter(1 + ProtoWriter.varintSize(resourceSpansLen) + resourceSpansLen);
    w.varint(REQUEST_RESOURCE_SPANS);
    w.varint(resourceSpansLen);
    w.lengthDelimited(RESOURCE_SPANS_RESOURCE, resource, 0, resource.length);
    w.varint(RESOURCE_SPANS_SCOPE_SPANS);
    w.varint(scopeSpansLen);
    w.lengthDelimited(SCOPE_SPANS_SCOPE, scope, 0, scope.length);
    byte[] spanBytes = arena.array();
    for (int i = t.first; i >= 0; i = next[i]) {
      int start = i == 0 ? 0 : ends[i - 1];
      w.lengthDelimited(SCOPE_SPANS_SPANS, spanBytes, start, ends[i] - start);
    }
    if (w.size() != w.array().length) {
      throw new IllegalStateException(
          "span record sized " + w.array().length + " but encoded " + w.size());
    }
    return w.array();
  }

  long spans() {
    return spans;
  }

  long batches() {
    return batches;
  }
}
