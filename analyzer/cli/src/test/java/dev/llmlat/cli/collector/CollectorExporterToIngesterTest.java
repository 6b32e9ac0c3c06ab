package dev.llmlat.cli.collector;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.KafkaBrokerExtension;
import dev.llmlat.testing.SpanFixtures;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Records exactly as the Collector's kafka exporter writes them, stored by llmlat's ingester. */
class CollectorExporterToIngesterTest {
  static final String SECOND_TRACE = "0123456789abcdef0123456789abcdef";

  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();
  @TempDir Path dir;

  /**
   * One Collector batch: the every-field span, a second trace in the same scope, and the second
   * trace again under a second scope of the same resource (so it becomes two records).
   */
  static ExportTraceServiceRequest batch() {
    ExportTraceServiceRequest everyField = SpanFixtures.everyField();
    ResourceSpans rs = everyField.getResourceSpans(0);
    Span other =
        Span.newBuilder()
            .setTraceId(SpanFixtures.id(SECOND_TRACE))
            .setSpanId(SpanFixtures.id("1111111111111111"))
            .setName("queue")
            .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
            .setStartTimeUnixNano(1_795_946_400_000_000_000L)
            .setEndTimeUnixNano(1_795_946_400_000_000_500L)
            .build();
    Span sameTraceOtherScope =
        Span.newBuilder()
            .setTraceId(SpanFixtures.id(SECOND_TRACE))
            .setSpanId(SpanFixtures.id("2222222222222222"))
            .setParentSpanId(other.getSpanId())
            .setName("decode")
            .setStartTimeUnixNano(1_795_946_400_223_456_790L)
            .setEndTimeUnixNano(1_795_946_400_323_456_790L)
            .build();
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            rs.toBuilder()
                .setSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
                .setScopeSpans(0, rs.getScopeSpans(0).toBuilder().addSpans(other))
                .addScopeSpans(
                    ScopeSpans.newBuilder()
                        .setScope(InstrumentationScope.newBuilder().setName("dev.llmlat.decode"))
                        .addSpans(sameTraceOtherScope)))
        .build();
  }

  @Test
  void storesTheExportersRecordsFieldForField() throws Exception {
    List<CollectorKafkaExporter.Record> records = CollectorKafkaExporter.records(batch());
    // Per resource and scope, per trace: what the exporter's SplitTraces yields.
    assertThat(records)
        .extracting(CollectorKafkaExporter.Record::key)
        .containsExactly(SpanFixtures.TRACE, SECOND_TRACE, SECOND_TRACE);

    String topic = "collector_" + Long.toHexString(System.nanoTime());
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
            new StringSerializer(),
            new ByteArraySerializer())) {
      for (int i = 0; i < records.size(); i++) {
        ProducerRecord<String, byte[]> r =
            new ProducerRecord<>(topic, records.get(i).key(), records.get(i).value());
        if (i == records.size() - 1) {
          // A header as `record_headers` would add: the contract says headers are ignored.
          r.headers().add("my-custom-header", "my-custom-value".getBytes(StandardCharsets.UTF_8));
        }
        producer.send(r).get(30, TimeUnit.SECONDS);
      }
    }

    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("store"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      IngesterConfig config =
          IngesterConfig.builder(broker.bootstrapServers())
              .topic(topic)
              .groupId("g-" + topic)
              .linger(Duration.ofMillis(100))
              .reportInterval(Duration.ZERO)
              .build();
      try (SpanIngester ingester = new SpanIngester(config, store).start()) {
        Await.until(
            () -> ingester.metrics().snapshot().spans() >= 3,
            "the ingester to take the 3 spans of " + topic,
            120);
        assertThat(ingester.metrics().snapshot().records()).isEqualTo(3);
        assertThat(ingester.metrics().snapshot().spans()).isEqualTo(3);
        assertThat(ingester.metrics().snapshot().deadLettered()).isZero();
      }

      SpanFixtures.assertEveryFieldStored(store);
      assertThat(
              store
                  .query(
                      "SELECT TraceId, SpanId, ParentSpanId, SpanName, SpanKind, ServiceName, ScopeName,"
                          + " ResourceAttributes['llmlat.layer'], toUnixTimestamp64Nano(Timestamp), Duration"
                          + " FROM otel_traces WHERE SpanId != '"
                          + SpanFixtures.SPAN
                          + "' ORDER BY SpanId")
                  .rows())
          .containsExactly(
              List.of(
                  SECOND_TRACE,
                  "1111111111111111",
                  "",
                  "queue",
                  "Internal",
                  "engine",
                  "dev.llmlat.scheduler",
                  "engine",
                  "1795946400000000000",
                  "500"),
              List.of(
                  SECOND_TRACE,
                  "2222222222222222",
                  "1111111111111111",
                  "decode",
                  "Unspecified",
                  "engine",
                  "dev.llmlat.decode",
                  "engine",
                  "1795946400223456790",
                  "100000000"));
    }
  }
}
