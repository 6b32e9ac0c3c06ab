package dev.llmlat.cli.collector;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.testing.KafkaBrokerExtension;
import dev.llmlat.testing.SpanFixtures;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.TracesData;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What llmlat's publisher writes, read the way the Collector's kafka receiver reads {@code
 * otlp_proto}: receiver/kafkareceiver's default traces unmarshaler is pdata's {@code
 * ptrace.ProtoUnmarshaler}, which decodes the value as {@code TracesData} (older pdata) or {@code
 * ExportTraceServiceRequest} (newer): both are field 1, repeated ResourceSpans.
 */
class PublisherToCollectorReceiverTest {
  static final HexFormat HEX = HexFormat.of();

  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();

  /** Three traces across two resources and two scopes: the publisher must split them. */
  static ExportTraceServiceRequest mixedBatch() {
    ExportTraceServiceRequest everyField = SpanFixtures.everyField();
    ScopeSpans gateway =
        ScopeSpans.newBuilder()
            .setScope(InstrumentationScope.newBuilder().setName("io.opentelemetry.http"))
            .addSpans(
                span(
                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                    "0000000000000001",
                    "POST /v1/chat/completions"))
            .addSpans(span(SpanFixtures.TRACE, "0000000000000002", "POST /v1/chat/completions"))
            .addSpans(span("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "0000000000000003", "POST upstream"))
            .build();
    ScopeSpans ext =
        ScopeSpans.newBuilder()
            .setScope(InstrumentationScope.newBuilder().setName("dev.llmlat.gateway"))
            .addSpans(span("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "0000000000000004", "first_chunk"))
            .build();
    return everyField.toBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(
                            SpanFixtures.kv(
                                "service.name", AnyValue.newBuilder().setStringValue("gateway")))
                        .addAttributes(
                            SpanFixtures.kv(
                                "llmlat.layer", AnyValue.newBuilder().setStringValue("gateway"))))
                .addScopeSpans(gateway)
                .addScopeSpans(ext))
        .build();
  }

  static Span span(String trace, String spanId, String name) {
    return Span.newBuilder()
        .setTraceId(SpanFixtures.id(trace))
        .setSpanId(SpanFixtures.id(spanId))
        .setName(name)
        .setKind(Span.SpanKind.SPAN_KIND_SERVER)
        .setStartTimeUnixNano(1_795_946_400_000_000_000L)
        .setEndTimeUnixNano(1_795_946_400_100_000_000L)
        .build();
  }

  @Test
  void everyRecordDecodesAsTheReceiverExpectsOneTracePerRecordKeyedByItsId() throws Exception {
    String topic = "publisher_" + Long.toHexString(System.nanoTime());
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 4);
    }
    ExportTraceServiceRequest batch = mixedBatch();
    try (SpanPublisher publisher = new SpanPublisher(broker.bootstrapServers(), topic)) {
      assertThat(publisher.publish(batch)).isEqualTo(3);
    }

    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "otelcol",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (records.size() < 3 && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
      }
    }
    assertThat(records).hasSize(3);

    List<Span> received = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> record : records) {
      // The receiver's decode: no error, and nothing it would not understand.
      TracesData traces = TracesData.parseFrom(record.value());
      assertThat(traces.getUnknownFields().asMap()).isEmpty();
      assertThat(ExportTraceServiceRequest.parseFrom(record.value()).getResourceSpansList())
          .isEqualTo(traces.getResourceSpansList());
      assertThat(record.headers().toArray()).as("no headers needed").isEmpty();

      String key = new String(record.key(), StandardCharsets.UTF_8);
      assertThat(key).matches("[0-9a-f]{32}");
      Set<String> traceIds =
          traces.getResourceSpansList().stream()
              .flatMap(rs -> rs.getScopeSpansList().stream())
              .flatMap(ss -> ss.getSpansList().stream())
              .map(s -> HEX.formatHex(s.getTraceId().toByteArray()))
              .collect(Collectors.toSet());
      assertThat(traceIds).as("one trace per record, the key's").containsExactly(key);
      traces
          .getResourceSpansList()
          .forEach(rs -> rs.getScopeSpansList().forEach(ss -> received.addAll(ss.getSpansList())));
    }
    assertThat(records)
        .extracting(r -> new String(r.key(), StandardCharsets.UTF_8))
        .containsExactlyInAnyOrder(
            SpanFixtures.TRACE,
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    // Nothing lost or altered, resource and scope kept with each span.
    List<Span> sent =
        batch.getResourceSpansList().stream()
            .flatMap(rs -> rs.getScopeSpansList().stream())
            .flatMap(ss -> ss.getSpansList().stream())
            .toList();
    assertThat(received).containsExactlyInAnyOrderElementsOf(sent);
    TracesData mixed =
        records.stream()
            .filter(r -> SpanFixtures.TRACE.equals(new String(r.key(), StandardCharsets.UTF_8)))
            .map(r -> parse(r.value()))
            .findFirst()
            .orElseThrow();
    assertThat(mixed.getResourceSpansList())
        .extracting(rs -> rs.getResource().getAttributes(0).getValue().getStringValue())
        .containsExactly("engine", "gateway");
    assertThat(mixed.getResourceSpans(0).getScopeSpans(0).getScope().getName())
        .isEqualTo("dev.llmlat.scheduler");
    assertThat(mixed.getResourceSpans(1).getScopeSpans(0).getScope().getName())
        .isEqualTo("io.opentelemetry.http");
    assertThat(mixed.getResourceSpans(0).getScopeSpans(0).getSpans(0))
        .isEqualTo(SpanFixtures.everyField().getResourceSpans(0).getScopeSpans(0).getSpans(0));
    // The partition the Collector's exporter picks for the same key with record_partitioner
    // sticky_key/murmur2 (franz-go: murmur2(key) & 0x7fffffff mod n): one request, one partition.
    assertThat(records)
        .allSatisfy(
            r -> assertThat(r.partition()).isEqualTo(Utils.toPositive(Utils.murmur2(r.key())) % 4));
  }

  static TracesData parse(byte[] value) {
    try {
      return TracesData.parseFrom(ByteString.copyFrom(value));
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    }
  }
}
