package dev.llmlat.imports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.kafka.SpanTopics;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.services.KafkaBrokerExtension;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class KafkaImportTargetTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();

  @TempDir Path dir;

  /** An import while the broker is away fails with a message naming the cluster and the topic, not a client stack trace. */
  @Test
  void noBrokerIsNamedInTheFailure() throws Exception {
    String nobody = "127.0.0.1:" + KafkaBroker.freePort();
    assertThatThrownBy(() -> new KafkaImportTarget(nobody, "otlp_spans"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("Kafka at " + nobody + " (topic otlp_spans): could not start a transaction: ")
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
    Path export = decodeStep(dir.resolve("decode256.sqlite"), requests, kernels);
    String topic = "otlp_spans_batch256";
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    try (KafkaImportTarget target = new KafkaImportTarget(broker.bootstrapServers(), topic)) {
      ImportReport report = GpuImporter.importFile(export, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), target);
      target.commit();
      assertThat(report.kernels()).isEqualTo(kernels);
      assertThat(report.stepsMatched()).isEqualTo(1);
      assertThat(report.requestsMatched()).isEqualTo(requests);
      assertThat(report.unattributed()).isEmpty();
    }

    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    List<Span> spans = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG, "batch256",
        ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
        new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (spans.size() < kernels + 1 && System.nanoTime() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          records.add(r);
          ExportTraceServiceRequest.parseFrom(r.value()).getResourceSpansList()
              .forEach(rs -> rs.getScopeSpansList().forEach(ss -> spans.addAll(ss.getSpansList())));
        }
      }
    }
    assertThat(spans).hasSize(kernels + 1);
    assertThat(records).allSatisfy(r -> assertThat(r.value().length).isLessThan(600_000));
    Span step = spans.stream().filter(s -> s.getName().equals("step")).findFirst().orElseThrow();
    assertThat(step.getLinksCount()).isEqualTo(requests);
    assertThat(spans.stream().filter(s -> !s.getName().equals("step")))
        .allSatisfy(k -> assertThat(k.getParentSpanId()).isEqualTo(step.getSpanId()))
        .allSatisfy(k -> assertThat(k.getAttributesList()).noneMatch(a -> a.getKey().equals("llmlat.trace_ids")));
  }

  /** An Nsight export with one scheduler-SDK decode range over {@code requests} traces launching {@code kernels} kernels. */
  private static Path decodeStep(Path file, int requests, int kernels) throws Exception {
    long pid = 42L << 24;
    long tid = pid + 1;
    List<String> traces = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      traces.add(String.format(Locale.ROOT, "%032x", 0x1000 + i));
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
      st.execute("INSERT INTO StringIds VALUES (1, 'flash_attn_decode'), (2, 'cudaLaunchKernel_v7000')");
      st.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
          + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, shortName INTEGER)");
      st.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
          + " correlationId INTEGER, nameId INTEGER)");
      st.execute("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, globalTid INTEGER)");
      c.setAutoCommit(false);
      try (PreparedStatement kernel = c.prepareStatement("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, ?, 1)");
          PreparedStatement call = c.prepareStatement("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, 2)")) {
        for (int i = 0; i < kernels; i++) {
          call.setLong(1, 1_000 + 10L * i);
          call.setLong(2, 1_005 + 10L * i);
          call.setLong(3, tid);
          call.setLong(4, 100 + i);
          call.addBatch();
          kernel.setLong(1, 100_000 + 20L * i);
          kernel.setLong(2, 100_015 + 20L * i);
          kernel.setLong(3, 100 + i);
          kernel.setLong(4, pid);
          kernel.addBatch();
        }
        call.executeBatch();
        kernel.executeBatch();
      }
      st.execute("INSERT INTO NVTX_EVENTS VALUES (500, " + (2_000 + 10L * kernels) + ", 59, 'llmlat step=00000000000000ab"
          + " kind=decode traces=" + String.join(",", traces) + "', " + tid + ")");
      c.commit();
    }
    return file;
  }
}
