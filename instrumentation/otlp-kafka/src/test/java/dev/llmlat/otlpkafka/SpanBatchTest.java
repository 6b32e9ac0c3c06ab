package dev.llmlat.otlpkafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class SpanBatchTest {
  private static Span span(int trace, int id) {
    byte[] t = new byte[16];
    t[15] = (byte) trace;
    byte[] s = new byte[8];
    s[7] = (byte) id;
    return Span.newBuilder()
        .setTraceId(ByteString.copyFrom(t))
        .setSpanId(ByteString.copyFrom(s))
        .setName("s" + id)
        .build();
  }

  private static io.opentelemetry.proto.common.v1.KeyValue serviceName(String name) {
    return io.opentelemetry.proto.common.v1.KeyValue.newBuilder()
        .setKey("service.name")
        .setValue(io.opentelemetry.proto.common.v1.AnyValue.newBuilder().setStringValue(name))
        .build();
  }

  @Test
  void splitsPerTraceKeepingResourceAndScopeInFirstSeenOrder() {
    Resource gpu = Resource.newBuilder().addAttributes(serviceName("gpu")).build();
    Resource engine = Resource.newBuilder().addAttributes(serviceName("engine")).build();
    InstrumentationScope scope = InstrumentationScope.newBuilder().setName("x").build();
    ExportTraceServiceRequest request =
        ExportTraceServiceRequest.newBuilder()
            .addResourceSpans(
                ResourceSpans.newBuilder()
                    .setResource(gpu)
                    .addScopeSpans(
                        ScopeSpans.newBuilder()
                            .setScope(scope)
                            .addSpans(span(2, 1))
                            .addSpans(span(1, 2))
                            .addSpans(span(2, 3))))
            .addResourceSpans(
                ResourceSpans.newBuilder()
                    .setResource(engine)
                    .addScopeSpans(ScopeSpans.newBuilder().setScope(scope).addSpans(span(1, 4))))
            .build();

    SpanBatch batch = SpanBatch.of(request);

    assertThat(batch.spanCount()).isEqualTo(4);
    assertThat(batch.recordCount()).isEqualTo(2);
    assertThat(batch.traceId(0))
        .isEqualTo(HexFormat.of().formatHex(span(2, 0).getTraceId().toByteArray()));
    List<ExportTraceServiceRequest> records = batch.requests();
    assertThat(records.get(0).getResourceSpansList()).hasSize(1);
    assertThat(records.get(0).getResourceSpans(0).getResource()).isEqualTo(gpu);
    assertThat(records.get(0).getResourceSpans(0).getScopeSpans(0).getSpansList())
        .extracting(Span::getName)
        .containsExactly("s1", "s3");
    // Trace 1 has spans under both resources: one record, two resource groups.
    assertThat(records.get(1).getResourceSpansList())
        .extracting(ResourceSpans::getResource)
        .containsExactly(gpu, engine);
    assertThat(batch.spans()).extracting(Span::getName).containsExactly("s1", "s3", "s2", "s4");
    assertThat(batch.byteSize()).isEqualTo(batch.record(0).length + batch.record(1).length);
  }

  @Test
  void rejectsKeysThatDoNotMatchRecords() {
    assertThatThrownBy(() -> SpanBatch.ofEncoded(List.of("a"), List.of(), 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 trace ids for 0 records");
  }

  @Test
  void saysWhichRecordIsNotARequest() {
    SpanBatch bad = SpanBatch.ofEncoded(List.of("ab"), List.of(new byte[] {(byte) 0xff}), 1);
    assertThatThrownBy(bad::requests)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("trace ab");
  }
}
