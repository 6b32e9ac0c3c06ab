package dev.llmlat.ingest.spans;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Records the ingester dead-letters instead of storing garbage, each with a reason naming the span.
 */
class OtlpRecordDecoderTest {
  static final long T = 1_795_970_300_000_000_000L;

  static Span.Builder span() {
    return Span.newBuilder()
        .setName("POST")
        .setTraceId(
            ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}))
        .setSpanId(ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}))
        .setStartTimeUnixNano(T)
        .setEndTimeUnixNano(T + 1000);
  }

  static byte[] record(UnaryOperator<Span.Builder> change) {
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .addScopeSpans(ScopeSpans.newBuilder().addSpans(change.apply(span()))))
        .build()
        .toByteArray();
  }

  static KeyValue intAttr(String key, long value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setIntValue(value))
        .build();
  }

  @Test
  void aValidSpanPasses() throws Exception {
    assertThat(
            OtlpRecordDecoder.decode(record(s -> s.addAttributes(intAttr("gpu.device.id", 7))))
                .getResourceSpansCount())
        .isOne();
  }

  @Test
  void badIdsTimesAndGpuIdsAreRefusedNamingTheSpan() {
    assertRefused(
        s -> s.setTraceId(ByteString.copyFrom(new byte[16])), "span 'POST': traceId is all zeros");
    assertRefused(
        s -> s.setSpanId(ByteString.copyFrom(new byte[8])), "span 'POST': spanId is all zeros");
    assertRefused(
        s -> s.setTraceId(ByteString.copyFrom(new byte[] {1, 2, 3})),
        "traceId has 3 bytes (OTLP needs 16)");
    assertRefused(
        s -> s.setSpanId(ByteString.copyFrom(new byte[] {1, 2, 3, 4})),
        "spanId has 4 bytes (OTLP needs 8)");
    assertRefused(s -> s.setStartTimeUnixNano(0), "span 'POST': startTimeUnixNano is missing or 0");
    assertRefused(
        s -> s.setStartTimeUnixNano(-1).setEndTimeUnixNano(-1),
        "startTimeUnixNano 18446744073709551615 is past year 2262");
    assertRefused(
        s -> s.setEndTimeUnixNano(T - 1),
        "endTimeUnixNano " + (T - 1) + " is before startTimeUnixNano " + T);
    assertRefused(
        s -> s.addAttributes(intAttr("gpu.device.id", 70_000)),
        "gpu.device.id: 70000 does not fit gpu_kernels.Device (UInt16: 0 to 65535)");
    assertRefused(
        s -> s.addAttributes(intAttr("gpu.stream.id", -1)),
        "gpu.stream.id: -1 does not fit gpu_kernels.Stream");
  }

  static void assertRefused(UnaryOperator<Span.Builder> change, String reason) {
    assertThatThrownBy(() -> OtlpRecordDecoder.decode(record(change)))
        .isInstanceOf(OtlpRecordDecoder.InvalidRecordException.class)
        .hasMessageContaining(reason);
  }
}
