package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.KafkaBrokerExtension;
import dev.llmlat.testing.SpanFixtures;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three `llmlat ingest` processes in one consumer group on a six-partition topic, writing through
 * `store serve`'s HTTP interface (the official driver) into one embedded store; one is killed with
 * SIGKILL while spans stream in. The others take its partitions over and every span is stored
 * exactly once.
 */
class IngesterScaleOutTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();
  static final int PARTITIONS = 6;
  static final Pattern OWNS = Pattern.compile("owns partitions: \\[([0-9, ]*)]");
  static final Pattern TOTAL = Pattern.compile("total ([0-9,]+) spans");

  @TempDir Path dir;
  final List<Process> ingesters = new ArrayList<>();

  @AfterEach
  void stopIngesters() {
    ingesters.forEach(Process::destroyForcibly);
  }

  Process startIngester(String bootstrap, String storeUrl, String topic, int n) throws IOException {
    Process p =
        ChildJvm.start(
            List.of(
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1"),
            "dev.llmlat.cli.Llmlat",
            List.of(
                "ingest",
                "--kafka",
                bootstrap,
                "--clickhouse-url",
                storeUrl,
                "--topic",
                topic,
                "--group",
                "g-" + topic,
                "--max-batch-spans",
                "300",
                "--linger-ms",
                "200",
                "--session-timeout-ms",
                "6000",
                "--report-interval-ms",
                "1000"),
            log(n));
    ingesters.add(p);
    return p;
  }

  Path log(int n) {
    return dir.resolve("ingest-" + n + ".log");
  }

  String logText(int n) {
    try {
      return Files.exists(log(n)) ? Files.readString(log(n)) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The partitions the ingester's log says it owns now. */
  Set<Integer> owned(int n) {
    return owned(logText(n));
  }

  /**
   * The partitions the last "owns partitions: [...]" line of a service's log names (the live
   * attributor's too).
   */
  static Set<Integer> owned(String logText) {
    Set<Integer> owned = new TreeSet<>();
    Matcher m = OWNS.matcher(logText);
    while (m.find()) {
      owned.clear();
      for (String p : m.group(1).split(",\\s*")) {
        if (!p.isBlank()) {
          owned.add(Integer.parseInt(p.strip()));
        }
      }
    }
    return owned;
  }

  /** The spans the ingester's last progress line says it has stored. */
  long storedBy(int n) {
    long total = 0;
    Matcher m = TOTAL.matcher(logText(n));
    while (m.find()) {
      total = Long.parseLong(m.group(1).replace(",", ""));
    }
    return total;
  }

  static long count(EmbeddedClickHouse store, String sql) {
    return Long.parseLong(store.query(sql).single());
  }

  /**
   * Produces spans {@code from..to-1}, keyed by trace id as the contract says (so they spread over
   * partitions).
   */
  static void produce(
      KafkaProducer<String, byte[]> producer, String topic, int from, int to, long pauseMsEvery100)
      throws InterruptedException {
    for (int i = from; i < to; i++) {
      byte[] value = SpanFixtures.oneSpan(i);
      String key =
          HexFormat.of()
              .formatHex(
                  new byte[] {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) (i >> 8), (byte) i});
      producer.send(new ProducerRecord<>(topic, key, value));
      if (pauseMsEvery100 > 0 && i % 100 == 99) {
        producer.flush();
        Thread.sleep(pauseMsEvery100);
      }
    }
    producer.flush();
  }

  @Test
  void ingestersShareThePartitionsAndSurviveOneKilledWithoutLossOrDuplicates() throws Exception {
    String topic = "scale_out";
    int sent = 6000;
    try (EmbeddedClickHouse store =
            EmbeddedClickHouse.openConfined(
                dir.resolve("clickhouse"), EngineLibrary.locate(), Confinement.STRICT);
        ClickHouseHttpServer http = ClickHouseHttpServer.start(store, 0);
        Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
        KafkaProducer<String, byte[]> producer =
            new KafkaProducer<>(
                Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                    broker.bootstrapServers(),
                    ProducerConfig.LINGER_MS_CONFIG,
                    5),
                new StringSerializer(),
                new ByteArraySerializer())) {
      SchemaMigrator.bundled().migrate(store);
      SpanTopics.ensure(admin, topic, PARTITIONS);
      for (int n = 0; n < 3; n++) {
        startIngester(broker.bootstrapServers(), http.url(), topic, n);
      }
      Await.until(
          () -> IntStream.range(0, 3).allMatch(n -> owned(n).size() == 2),
          "each of 3 ingesters to own 2 partitions",
          90);
      Set<Integer> killedOwned = owned(0);

      // first third: every ingester stores a share
      produce(producer, topic, 0, 2000, 0);
      Await.until(
          () -> count(store, "SELECT count() FROM otel_traces") >= 2000,
          "the first 2000 spans stored",
          60);
      Await.until(
          () -> IntStream.range(0, 3).allMatch(n -> storedBy(n) > 0),
          "every ingester's progress line to show spans",
          30);
      for (int n = 0; n < 3; n++) {
        assertThat(storedBy(n)).as("spans stored by ingester " + n).isBetween(1L, 2000L);
      }

      // the rest streams in (100 spans every 250 ms, ~10 s) while ingester 0 is killed outright
      // mid-stream: once the store has a quarter of the stream, with three quarters still to come
      Thread streamer =
          Thread.ofPlatform()
              .start(
                  () -> {
                    try {
                      produce(producer, topic, 2000, sent, 250);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                  });
      Await.until(
          () -> count(store, "SELECT count() FROM otel_traces") >= 3000,
          "a quarter of the stream stored",
          120);
      ingesters.get(0).destroyForcibly(); // SIGKILL: no close, no commit
      assertThat(ingesters.get(0).waitFor(10, TimeUnit.SECONDS)).isTrue();
      streamer.join();

      // the survivors take over its partitions once its session times out
      Await.until(
          () -> {
            Set<Integer> union = new TreeSet<>(owned(1));
            union.addAll(owned(2));
            return union.size() == PARTITIONS && union.containsAll(killedOwned);
          },
          "the surviving ingesters to own all " + PARTITIONS + " partitions",
          60);
      Await.until(
          () -> count(store, "SELECT count() FROM otel_traces") >= sent,
          sent + " spans stored",
          90);
      Await.until(
          () -> committedUpToEnd(admin, topic),
          "every partition's offset committed to its end",
          30);

      assertThat(count(store, "SELECT count() FROM otel_traces")).isEqualTo(sent);
      assertThat(count(store, "SELECT uniqExact(SpanId) FROM otel_traces")).isEqualTo(sent);
      assertThat(storedBy(1) + storedBy(2)).as("spans stored by the survivors").isGreaterThan(0);
    }
  }

  /**
   * True when the group's committed offset of every partition is its end, without a pending intent.
   */
  static boolean committedUpToEnd(Admin admin, String topic) {
    Map<TopicPartition, OffsetAndMetadata> committed;
    Map<TopicPartition, org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo>
        ends;
    try {
      committed =
          admin.listConsumerGroupOffsets("g-" + topic).partitionsToOffsetAndMetadata().get();
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < PARTITIONS; p++) {
        latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      ends = admin.listOffsets(latest).all().get();
    } catch (InterruptedException | java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e);
    }
    for (var end : ends.entrySet()) {
      OffsetAndMetadata c = committed.get(end.getKey());
      if (c == null || c.offset() != end.getValue().offset() || !c.metadata().isEmpty()) {
        return false;
      }
    }
    return true;
  }
}
