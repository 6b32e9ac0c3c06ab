package dev.llmlat.cli.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.cli.Llmlat;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.KafkaBrokerExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka security settings reach every client llmlat creates: a real broker with a SASL_PLAINTEXT
 * listener (PLAIN) takes an import and the ingester with the right credentials, refuses both with
 * wrong ones, with a message that says so and never shows the secret.
 */
class KafkaClientSecurityTest {
  private static final String SECRET = "alice-s3cret-7c41e9";
  private static final String WRONG = "not-alices-pw-93b2";

  @RegisterExtension
  static final KafkaBrokerExtension broker = new KafkaBrokerExtension(Map.of("alice", SECRET));

  @TempDir Path dir;

  @BeforeAll
  static void topics() throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, LlmlatTopics.SPANS, 1);
    }
  }

  record Run(int exit, String out, String err) {}

  /**
   * Runs the CLI in-process, capturing its streams and everything logged to System.err meanwhile.
   */
  static Run llmlat(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    ByteArrayOutputStream logged = new ByteArrayOutputStream();
    PrintStream systemErr = System.err;
    System.setErr(new PrintStream(logged, true, StandardCharsets.UTF_8));
    int exit;
    try {
      exit = Llmlat.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    } finally {
      System.setErr(systemErr);
    }
    return new Run(exit, out.toString(), err + logged.toString(StandardCharsets.UTF_8));
  }

  private Path clientConfig(String name, String password) throws Exception {
    Path file = dir.resolve(name);
    Files.writeString(
        file,
        """
        security.protocol=SASL_PLAINTEXT
        sasl.mechanism=PLAIN
        sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="%s";
        # fail fast in the test when refused
        max.block.ms=10000
        """
            .formatted(password));
    return file;
  }

  private Path otlpJson(String traceId) throws Exception {
    Path file = dir.resolve(traceId + ".json");
    long t = System.currentTimeMillis() * 1_000_000L;
    Files.writeString(
        file,
        """
        {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"engine"}},
          {"key":"llmlat.layer","value":{"stringValue":"engine"}}]},
          "scopeSpans":[{"scope":{"name":"test"},"spans":[
            {"traceId":"%1$s","spanId":"00000000000000a1","name":"queue","kind":1,"startTimeUnixNano":"%2$d","endTimeUnixNano":"%3$d"},
            {"traceId":"%1$s","spanId":"00000000000000a2","name":"prefill","kind":1,"startTimeUnixNano":"%3$d","endTimeUnixNano":"%4$d"}]}]}]}
        """
            .formatted(traceId, t, t + 1_000_000, t + 3_000_000));
    return file;
  }

  @Test
  void importAndIngestWorkThroughSaslWithTheRightCredentials() throws Exception {
    String traceId = "5a5a0000000000000000000000000001";
    Path good = clientConfig("good.properties", SECRET);
    Run imported =
        llmlat(
            "import",
            "otlp-json",
            otlpJson(traceId).toString(),
            "--kafka",
            broker.saslBootstrapServers(),
            "--kafka-config",
            good.toString());
    assertThat(imported.exit()).as(imported.err()).isZero();
    assertThat(imported.out() + imported.err()).doesNotContain(SECRET);

    IngesterConfig config =
        IngesterConfig.builder(broker.saslBootstrapServers())
            .groupId("sasl-test")
            .linger(Duration.ofMillis(100))
            .kafkaClient(KafkaClientProperties.load(good))
            .build();
    assertThat(config.toString()).doesNotContain(SECRET);
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("data"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      try (SpanIngester ingester = new SpanIngester(config, store).start()) {
        Await.until(
            () -> ingester.failure() != null || count(store, traceId) >= 2,
            "the imported trace ingested over SASL",
            120);
        assertThat(count(store, traceId))
            .as("spans of the imported trace ingested over SASL; failure: %s", ingester.failure())
            .isEqualTo(2);
      }
    }
  }

  @Test
  void wrongCredentialsAreRefusedWithAClearMessageAndNothingIsPublished() throws Exception {
    String traceId = "5a5a0000000000000000000000000002";
    Path wrong = clientConfig("wrong.properties", WRONG);
    Run imported =
        llmlat(
            "import",
            "otlp-json",
            otlpJson(traceId).toString(),
            "--kafka",
            broker.saslBootstrapServers(),
            "--kafka-config",
            wrong.toString());
    assertThat(imported.exit()).isEqualTo(Llmlat.EXIT_FAILURE);
    assertThat(imported.err())
        .contains("Kafka at " + broker.saslBootstrapServers())
        .contains("Authentication failed: Invalid username or password")
        .contains("(check the --kafka-config settings)")
        .doesNotContain(WRONG);

    IngesterConfig config =
        IngesterConfig.builder(broker.saslBootstrapServers())
            .groupId("sasl-wrong")
            .kafkaClient(KafkaClientProperties.load(wrong))
            .build();
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("data"), EngineLibrary.locate())) {
      assertThatThrownBy(() -> new SpanIngester(config, store).start())
          .hasMessageContaining("Authentication failed")
          .hasMessageNotContaining(WRONG);
    }

    // read everything on the topic over plaintext, to its end (open transactions too): the refused
    // import left no record behind
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_uncommitted"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(LlmlatTopics.SPANS).stream()
              .map(p -> new TopicPartition(p.topic(), p.partition()))
              .toList();
      assertThat(partitions).as("the topic made before the tests").isNotEmpty();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
      List<String> keys = new ArrayList<>();
      Await.until(
          () -> {
            consumer
                .poll(Duration.ofMillis(200))
                .forEach(r -> keys.add(new String(r.key(), StandardCharsets.US_ASCII)));
            return partitions.stream().allMatch(p -> consumer.position(p) >= ends.get(p));
          },
          LlmlatTopics.SPANS + " read to its end",
          120);
      assertThat(keys).doesNotContain(traceId);
    }
  }

  private static long count(EmbeddedClickHouse store, String traceId) {
    return Long.parseLong(
        store
            .query(
                "SELECT count() FROM otel_traces WHERE TraceId = {id:String}",
                Map.of("id", traceId))
            .single());
  }

  @Test
  void badSettingsFilesAreNamedAndRefused() throws Exception {
    Path missing = dir.resolve("nope.properties");
    Run r =
        llmlat(
            "import",
            "otlp-json",
            otlpJson("5a5a0000000000000000000000000003").toString(),
            "--kafka",
            broker.saslBootstrapServers(),
            "--kafka-config",
            missing.toString());
    assertThat(r.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(r.err()).contains(missing.toString()).contains("not a readable file");

    Path owned = dir.resolve("owned.properties");
    Files.writeString(owned, "group.id=mine\n");
    Run o =
        llmlat(
            "import",
            "otlp-json",
            otlpJson("5a5a0000000000000000000000000004").toString(),
            "--kafka",
            broker.saslBootstrapServers(),
            "--kafka-config",
            owned.toString());
    assertThat(o.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(o.err()).contains(owned.toString()).contains("must not set group.id");
  }

  @Test
  void settingsNeverShowTheirValues() throws Exception {
    KafkaClientProperties p = KafkaClientProperties.load(clientConfig("good.properties", SECRET));
    assertThat(p.toString())
        .contains("SASL_PLAINTEXT")
        .contains("sasl.jaas.config")
        .doesNotContain(SECRET);
    // Kafka's own config logging (at INFO, which llmlat's logging leaves off for Kafka) masks it
    // too
    ConsumerConfig kafkaView =
        new ConsumerConfig(
            p.applyTo(
                new java.util.HashMap<>(
                    Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1",
                        ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
                        ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG,
                            ByteArrayDeserializer.class))));
    assertThat(kafkaView.values().get("sasl.jaas.config").toString()).isEqualTo("[hidden]");
  }
}
