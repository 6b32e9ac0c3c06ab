package dev.llmlat.live;

import static dev.llmlat.testing.SpanFixtures.id;
import static dev.llmlat.testing.SpanFixtures.kv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.live.internal.LiveMetrics;
import dev.llmlat.live.internal.RoutedSpans;
import dev.llmlat.live.internal.SpanRouting;
import dev.llmlat.live.internal.TracePartitioner;
import dev.llmlat.otlpkafka.OtlpAttributes;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.streams.KeyValue;
import org.junit.jupiter.api.Test;

/** How span records are routed to the request traces that need them. */
class SpanRoutingTest {
  static final String A = "0af7651916cd43dd8448eb211c80319c";
  static final String B = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String C = "5b8efff798038103d269b633813fc60c";
  static final long T = 1_795_946_400_000_000_000L;

  /**
   * A scheduler-SDK step in request A's trace serving A, B and C: the ids in llmlat.trace_ids and
   * as links.
   */
  static Span step() {
    return Span.newBuilder()
        .setTraceId(id(A))
        .setSpanId(id("00000000000000aa"))
        .setName("step")
        .setStartTimeUnixNano(T)
        .setEndTimeUnixNano(T + 1000)
        .addAttributes(OtlpAttributes.strings("llmlat.trace_ids", List.of(A, B, "not-a-trace-id")))
        .addLinks(Span.Link.newBuilder().setTraceId(id(C)).setSpanId(id("00000000000000cc")))
        .addLinks(
            Span.Link.newBuilder()
                .setTraceId(id("00000000000000000000000000000000"))
                .setSpanId(id("00000000000000cc")))
        .build();
  }

  @Test
  void aStepGoesToEveryRequestItServedOnceAndATracesOwnSpansToItself() {
    Span request =
        Span.newBuilder()
            .setTraceId(id(B))
            .setSpanId(id("00000000000000bb"))
            .setName("llm_request")
            .setStartTimeUnixNano(T)
            .setEndTimeUnixNano(T + 5000)
            .build();
    byte[] record =
        ExportTraceServiceRequest.newBuilder()
            .addResourceSpans(
                ResourceSpans.newBuilder()
                    .setResource(
                        Resource.newBuilder()
                            .addAttributes(
                                kv("llmlat.layer", AnyValue.newBuilder().setStringValue("engine"))))
                    .addScopeSpans(ScopeSpans.newBuilder().addSpans(step()).addSpans(request)))
            .build()
            .toByteArray();
    LiveMetrics metrics = new LiveMetrics();
    List<KeyValue<String, RoutedSpans>> routed = SpanRouting.route(record, metrics);
    assertThat(routed).hasSize(2);
    RoutedSpans shared = routed.get(0).value;
    assertThat(shared.shared()).isTrue();
    assertThat(shared.targets()).containsExactly(A, B, C);
    RoutedSpans own = routed.get(1).value;
    assertThat(own.shared()).isFalse();
    assertThat(own.targets()).containsExactly(B);
    assertThat(own.spans()).extracting(s -> s.name()).containsExactly("llm_request");
    assertThat(metrics.spans.get()).isEqualTo(2);

    // the internal topic's record survives its serde, and reaches each of its targets' partitions
    RoutedSpans back =
        RoutedSpans.SERDE
            .deserializer()
            .deserialize("t", RoutedSpans.SERDE.serializer().serialize("t", shared));
    assertThat(back).isEqualTo(shared);
    Set<Integer> partitions =
        Set.of(
            TracePartitioner.partitionOf(A, 6),
            TracePartitioner.partitionOf(B, 6),
            TracePartitioner.partitionOf(C, 6));
    assertThat(new TracePartitioner().partitions("t", A, shared, null, 6))
        .isEqualTo(Optional.of(partitions));
  }

  @Test
  void aRecordThatIsNoSpanBatchIsCountedAndSkipped() {
    LiveMetrics metrics = new LiveMetrics();
    assertThat(
            SpanRouting.route(
                "not protobuf".getBytes(java.nio.charset.StandardCharsets.UTF_8), metrics))
        .isEmpty();
    assertThat(SpanRouting.route(new byte[0], metrics)).isEmpty();
    assertThat(metrics.undecodable.get()).isEqualTo(2);
  }
}
