package dev.llmlat.gpu.internal;

import com.google.protobuf.ByteString;
import dev.llmlat.gpu.OtlpAttributes;
import dev.llmlat.gpu.SpanBatch;
import dev.llmlat.gpu.SpanSink;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Groups encoded spans under the GPU resource into one {@code ExportTraceServiceRequest} per trace
 * id, and hands them to the sink as a {@link SpanBatch} every {@code batchSize} spans. The request
 * around a trace's spans is written once per record from its lengths, so a span is encoded exactly
 * once and never becomes a message object.
 */
final class SpanRecords {
  static final InstrumentationScope SCOPE =
      InstrumentationScope.newBuilder().setName("dev.llmlat.gpu-import").setVersion("0.1.0").build();
  private static final int REQUEST_RESOURCE_SPANS = ProtoWriter.lenTag(1);
  private static final int RESOURCE_SPANS_RESOURCE = ProtoWriter.lenTag(1);
  private static final int RESOURCE_SPANS_SCOPE_SPANS = ProtoWriter.lenTag(2);
  private static final int SCOPE_SPANS_SCOPE = ProtoWriter.lenTag(1);
  private static final int SCOPE_SPANS_SPANS = ProtoWriter.lenTag(2);
  private static final HexFormat HEX = HexFormat.of();

  private final byte[] resource;
  private final byte[] scope;
  private final SpanSink sink;
  private final int batchSize;
  // The spans of this batch by trace, in order of first appearance (as the Kafka records go out).
  private final Map<ByteString, ProtoWriter> open = new LinkedHashMap<>();
  private final ArrayDeque<ProtoWriter> free = new ArrayDeque<>();
  private int pending;
  private long spans;
  private long batches;

  SpanRecords(String serviceName, String hostName, int batchSize, SpanSink sink) {
    Resource.Builder r = Resource.newBuilder()
        .addAttributes(OtlpAttributes.string("service.name", serviceName))
        .addAttributes(OtlpAttributes.string(LlmlatAttributes.LAYER, LlmlatAttributes.LAYER_GPU));
    if (hostName != null) {
      r.addAttributes(OtlpAttributes.string("host.name", hostName));
    }
    this.resource = r.build().toByteArray();
    this.scope = SCOPE.toByteArray();
    this.sink = sink;
    this.batchSize = batchSize;
  }

  /** Adds one encoded span (a {@code Span} message body) of trace {@code traceId}. */
  void add(ByteString traceId, byte[] span, int off, int len) {
    ProtoWriter w = open.get(traceId);
    if (w == null) {
      w = free.isEmpty() ? new ProtoWriter(1024) : free.pop();
      open.put(traceId, w);
    }
    w.lengthDelimited(SCOPE_SPANS_SPANS, span, off, len);
    spans++;
    if (++pending >= batchSize) {
      flush();
    }
  }

  void add(Span span) {
    byte[] b = span.toByteArray();
    add(span.getTraceId(), b, 0, b.length);
  }

  void flush() {
    if (pending == 0) {
      return;
    }
    List<String> traceIds = new ArrayList<>(open.size());
    List<byte[]> records = new ArrayList<>(open.size());
    for (Map.Entry<ByteString, ProtoWriter> e : open.entrySet()) {
      traceIds.add(HEX.formatHex(e.getKey().toByteArray()));
      records.add(request(e.getValue()));
      e.getValue().reset();
      free.push(e.getValue());
    }
    open.clear();
    int count = pending;
    pending = 0;
    batches++;
    sink.accept(SpanBatch.ofEncoded(traceIds, records, count));
  }

  /** ExportTraceServiceRequest { resource_spans { resource, scope_spans { scope, spans... } } }. */
  private byte[] request(ProtoWriter spansOfTrace) {
    int spansLen = spansOfTrace.size();
    int scopeSpansLen = 1 + ProtoWriter.varintSize(scope.length) + scope.length + spansLen;
    int resourceSpansLen = 1 + ProtoWriter.varintSize(resource.length) + resource.length
        + 1 + ProtoWriter.varintSize(scopeSpansLen) + scopeSpansLen;
    ProtoWriter w = new ProtoWriter(1 + ProtoWriter.varintSize(resourceSpansLen) + resourceSpansLen);
    w.varint(REQUEST_RESOURCE_SPANS);
    w.varint(resourceSpansLen);
    w.lengthDelimited(RESOURCE_SPANS_RESOURCE, resource, 0, resource.length);
    w.varint(RESOURCE_SPANS_SCOPE_SPANS);
    w.varint(scopeSpansLen);
    w.lengthDelimited(SCOPE_SPANS_SCOPE, scope, 0, scope.length);
    w.raw(spansOfTrace.array(), 0, spansLen);
    if (w.size() != w.array().length) {
      throw new IllegalStateException("span record sized " + w.array().length + " but encoded " + w.size());
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
