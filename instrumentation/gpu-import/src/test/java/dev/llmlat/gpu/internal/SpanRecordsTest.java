package dev.llmlat.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.llmlat.otlpkafka.SpanBatch;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class SpanRecordsTest {
  private static final ByteString A =
      ByteString.copyFrom(HexFormat.of().parseHex("0123456789abcdef0123456789abcdef"));
  private static final ByteString B =
      ByteString.copyFrom(HexFormat.of().parseHex("fedcba9876543210fedcba9876543210"));

  /**
   * Long kernel names (old exports name kernels by their demangled name) must not make a record
   * Kafka refuses.
   */
  @Test
  void aTracesSpansOfOneBatchSplitIntoRecordsUnderTheLimitInOrder() throws Exception {
    List<SpanBatch> batches = new ArrayList<>();
    SpanRecords records = new SpanRecords("svc", "host", 5000, batches::add);
    String longName = "void cutlass::Kernel<" + "x".repeat(2000) + ">";
    List<Span> sent = new ArrayList<>();
    for (int i = 0; i < 1200; i++) {
      ByteString trace = i % 100 == 99 ? B : A;
      Span span =
          Span.newBuilder()
              .setTraceId(trace)
              .setSpanId(
                  ByteString.copyFrom(new byte[] {0, 0, 0, 0, 0, 0, (byte) (i >> 8), (byte) i}))
              .setName(longName + i)
              .setStartTimeUnixNano(1000 + i)
              .build();
      byte[] bytes = span.toByteArray();
      records.add(trace, bytes, 0, bytes.length);
      sent.add(span);
    }
    records.flush();

    assertThat(batches).hasSize(1);
    SpanBatch batch = batches.get(0);
    assertThat(batch.spanCount()).isEqualTo(1200);
    List<Span> ofA = new ArrayList<>();
    List<Span> ofB = new ArrayList<>();
    int recordsOfA = 0;
    for (int r = 0; r < batch.recordCount(); r++) {
      assertThat(batch.record(r).length)
          .as("record %d", r)
          .isLessThanOrEqualTo(SpanRecords.MAX_RECORD_SPAN_BYTES + 1024);
      ExportTraceServiceRequest request = ExportTraceServiceRequest.parseFrom(batch.record(r));
      assertThat(request.toByteArray()).isEqualTo(batch.record(r));
      List<Span> spans = request.getResourceSpans(0).getScopeSpans(0).getSpansList();
      String key = batch.traceId(r);
      assertThat(spans)
          .allSatisfy(
              s ->
                  assertThat(HexFormat.of().formatHex(s.getTraceId().toByteArray()))
                      .isEqualTo(key));
      if (batch.traceId(r).startsWith("0123")) {
        ofA.addAll(spans);
        recordsOfA++;
      } else {
        ofB.addAll(spans);
      }
    }
    // ~2 KB a span: 1188 spans of A need five records of at most 512 KiB
    assertThat(recordsOfA).isEqualTo(5);
    assertThat(ofA)
        .containsExactlyElementsOf(sent.stream().filter(s -> s.getTraceId().equals(A)).toList());
    assertThat(ofB)
        .containsExactlyElementsOf(sent.stream().filter(s -> s.getTraceId().equals(B)).toList());
  }
}
