package dev.llmlat.cli.imports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.llmlat.cli.Llmlat;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.imports.KafkaImportTarget;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.ExportFixtures;
import dev.llmlat.testing.KafkaBrokerExtension;
import dev.llmlat.testing.TopicEnd;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class KafkaImportTargetTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();

  @TempDir Path dir;

  /**
   * An import while the broker is away fails with a message naming the cluster and the topic, not a
   * client stack trace.
   */
  @Test
  void noBrokerIsNamedInTheFailure() throws Exception {
    String nobody = "127.0.0.1:" + KafkaBroker.freePort();
    assertThatThrownBy(() -> new KafkaImportTarget(nobody, "otlp_spans"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "Kafka at " + nobody + " (topic otlp_spans): could not start a transaction: ")
        .hasMessageContaining("15000ms");
  }

  /**
   * A decode step of 256 requests and its 3,000 kernels, through a broker with Kafka's default
   * limits: when every kernel span carried its step's 256 trace ids (9 KB), one trace's kernels of
   * a batch made records of several MB, which the producer refuses.
   */
  @Test
  void aDecodeStepOfTwoHundredFiftySixRequestsFitsKafkasRecordLimit() throws Exception {
    int requests = 256;
    int kernels = 3000;
    Path export =
        ExportFixtures.nsysDecodeStep(dir.resolve("decode256.sqlite"), requests, kernels, 0x1000);
    String topic = "otlp_spans_batch256";
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    try (KafkaImportTarget target = new KafkaImportTarget(broker.bootstrapServers(), topic)) {
      ImportReport report =
          GpuImporter.importFile(
              export, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), target);
      target.commit();
      assertThat(report.kernels()).isEqualTo(kernels);
      assertThat(report.stepsMatched()).isEqualTo(1);
      assertThat(report.requestsMatched()).isEqualTo(requests);
      assertThat(report.unattributed()).isEmpty();
    }

    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    List<Span> spans = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "batch256",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      Await.until(
          () -> {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
              records.add(r);
              try {
                ExportTraceServiceRequest.parseFrom(r.value())
                    .getResourceSpansList()
                    .forEach(
                        rs ->
                            rs.getScopeSpansList().forEach(ss -> spans.addAll(ss.getSpansList())));
              } catch (InvalidProtocolBufferException e) {
                throw new AssertionError(
                    "record at offset " + r.offset() + " is no OTLP request", e);
              }
            }
            return spans.size() >= kernels + 1;
          },
          (kernels + 1) + " spans on " + topic,
          120);
    }
    assertThat(spans).hasSize(kernels + 1);
    assertThat(records).allSatisfy(r -> assertThat(r.value().length).isLessThan(600_000));
    Span step = spans.stream().filter(s -> s.getName().equals("step")).findFirst().orElseThrow();
    assertThat(step.getLinksCount()).isEqualTo(requests);
    assertThat(spans.stream().filter(s -> !s.getName().equals("step")))
        .allSatisfy(k -> assertThat(k.getParentSpanId()).isEqualTo(step.getSpanId()))
        .allSatisfy(
            k ->
                assertThat(k.getAttributesList())
                    .noneMatch(a -> a.getKey().equals("llmlat.trace_ids")));
  }

  /** A file imported twice through Kafka is published once, and the ingester stores one copy. */
  @Test
  void theSameFileImportedTwiceIsPublishedAndStoredOnce() throws Exception {
    Path export = ExportFixtures.nsysDecodeStep(dir.resolve("twice.sqlite"), 4, 50, 0x3000);
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, LlmlatTopics.SPANS, 2);
    }
    String[] args = {"import", "nsys", export.toString(), "--kafka", broker.bootstrapServers()};
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    assertThat(Llmlat.run(args, new PrintWriter(out, true), new PrintWriter(err, true)))
        .as(err.toString())
        .isZero();
    assertThat(out.toString()).startsWith("imported " + export);

    StringWriter again = new StringWriter();
    assertThat(Llmlat.run(args, new PrintWriter(again, true), new PrintWriter(err, true)))
        .as(err.toString())
        .isZero();
    assertThat(again.toString())
        .startsWith(
            "already imported into Kafka " + broker.bootstrapServers() + " topic otlp_spans on ")
        .contains(" (51 spans): nothing to do (--force publishes it again)");

    assertThat(ingestAndCount(LlmlatTopics.SPANS)).isEqualTo(List.of(1L, 50L, 200L));
  }

  /**
   * A killed import leaves its transaction open on the broker; the re-run of the same file fences
   * it (its records are aborted at once, never ingested), publishes the file, and records it.
   */
  @Test
  void aKilledImportIsAbortedByTheRerunAndStoredOnce() throws Exception {
    Path export = ExportFixtures.nsysDecodeStep(dir.resolve("killed.sqlite"), 4, 50, 0x4000);
    String topic = "otlp_spans_killed";
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    ImportedFile file = ImportedFile.of(export, "nsys", "--nvtx-pattern auto --service llm-engine");
    KafkaImportTarget killed =
        new KafkaImportTarget(broker.bootstrapServers(), topic, KafkaClientProperties.none(), file);
    GpuImporter.importFile(export, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), killed);
    // its records reach the broker; then it stops, as a killed process does, mid-transaction
    long sent = killed.records();
    assertThat(sent).isPositive();
    Await.until(
        () -> recordsOnTheBroker(topic) == sent,
        sent + " records of the open transaction on " + topic,
        120);

    try (KafkaImportTarget rerun =
        new KafkaImportTarget(
            broker.bootstrapServers(), topic, KafkaClientProperties.none(), file)) {
      assertThat(rerun.earlier()).isEmpty();
      GpuImporter.importFile(export, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), rerun);
      rerun.commit();
    }
    assertThatThrownBy(killed::commit)
        .hasMessageContaining("another run importing the same file took over");
    killed.close();
    try (KafkaImportTarget third =
        new KafkaImportTarget(
            broker.bootstrapServers(), topic, KafkaClientProperties.none(), file)) {
      assertThat(third.earlier())
          .hasValueSatisfying(
              r -> {
                assertThat(r.done()).isTrue();
                assertThat(r.spans()).isEqualTo(51);
                assertThat(r.file()).isEqualTo(file);
              });
    }

    assertThat(ingestAndCount(topic)).isEqualTo(List.of(1L, 50L, 200L));
  }

  /** Records on {@code topic}'s partitions, committed or not (an open transaction's too). */
  private static long recordsOnTheBroker(String topic) {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (TopicPartitionInfo p :
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions()) {
        latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest());
      }
      return admin
          .listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
          .all()
          .get()
          .values()
          .stream()
          .mapToLong(ListOffsetsResult.ListOffsetsResultInfo::offset)
          .sum();
    } catch (InterruptedException | ExecutionException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Ingests {@code topic} into a fresh store until the ingester has committed the markers written
   * to every partition after the test's records (so everything before them is stored) and returns
   * the rows of otel_traces, gpu_kernels and gpu_kernel_requests, the markers not counted.
   */
  private List<Long> ingestAndCount(String topic) throws Exception {
    TopicEnd end = TopicEnd.mark(broker.bootstrapServers(), topic);
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("data-" + topic), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      IngesterConfig config =
          IngesterConfig.builder(broker.bootstrapServers())
              .topic(topic)
              .groupId("g-" + topic)
              .linger(Duration.ofMillis(100))
              .reportInterval(Duration.ZERO)
              .build();
      try (SpanIngester ingester = new SpanIngester(config, store).start()) {
        end.awaitHandledBy(config.groupId());
      }
      return counts(store);
    }
  }

  private static List<Long> counts(EmbeddedClickHouse store) {
    return Stream.of(
            "otel_traces WHERE SpanName != '" + TopicEnd.SPAN_NAME + "'",
            "gpu_kernels",
            "gpu_kernel_requests")
        .map(t -> Long.parseLong(store.query("SELECT count() FROM " + t).single()))
        .toList();
  }
}
