package dev.llmlat.bench.faults;

import dev.llmlat.cli.Llmlat;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.services.LocalServices;
import dev.llmlat.store.JdbcClickHouse;
import dev.llmlat.store.StoreConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Real processes for one scenario, each in its own scratch directory: a Kafka broker (child JVM on
 * fixed ports, so it can come back where clients look for it), the store ({@code llmlat store
 * serve} over the embedded engine, reached over HTTP with the official driver) and the ingester
 * ({@code llmlat ingest}), so that SIGKILL and restarts are real.
 */
final class FaultRig implements AutoCloseable {
  static final String GROUP = "llmlat-ingest";
  private static final Pattern HOLDING = Pattern.compile("holding (\\d+) spans, heap (\\d+) MB");

  final Path dir;
  private final KafkaBroker.Config brokerConfig;
  private final int storePort;
  private KafkaBroker broker;
  private Process store;
  private Process ingester;
  private int ingesterStarts;
  private JdbcClickHouse jdbc;

  private FaultRig(Path dir) throws IOException {
    this.dir = dir;
    Files.createDirectories(dir);
    this.brokerConfig =
        new KafkaBroker.Config(
            dir.resolve("kafka"),
            dir.resolve("kafka.log"),
            dir.resolve("kafka.pid"),
            KafkaBroker.freePort(),
            KafkaBroker.freePort());
    this.storePort = KafkaBroker.freePort();
  }

  /** A broker with the span topic ({@code partitions}) and its dead-letter topic. */
  static FaultRig withBroker(Path dir, int partitions) throws IOException {
    FaultRig rig = new FaultRig(dir);
    try {
      rig.startBroker();
      try (Admin admin = rig.admin()) {
        SpanTopics.ensure(admin, LlmlatTopics.SPANS, partitions);
      }
      return rig;
    } catch (RuntimeException | IOException e) {
      rig.close();
      throw e;
    }
  }

  /** A broker, the store process and the ingester. */
  static FaultRig full(Path dir, int partitions) throws IOException, InterruptedException {
    FaultRig rig = withBroker(dir, partitions);
    try {
      rig.startStore();
      rig.startIngester();
      return rig;
    } catch (RuntimeException | IOException | InterruptedException e) {
      rig.close();
      throw e;
    }
  }

  String bootstrap() {
    return "127.0.0.1:" + brokerConfig.port();
  }

  String storeUrl() {
    return "http://127.0.0.1:" + storePort;
  }

  Admin admin() {
    return Admin.create(
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
            bootstrap(),
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG,
            30_000));
  }

  void startBroker() throws IOException {
    broker = KafkaBroker.start(brokerConfig); // same ports and data: a restart, not a new cluster
  }

  /** SIGTERM and a clean shutdown, as an operator's restart does. */
  void stopBroker() {
    broker.stop(Duration.ofSeconds(30));
  }

  void startStore() throws IOException, InterruptedException {
    store =
        LocalServices.startStore(
            Llmlat.class.getName(), dir.resolve("clickhouse"), storePort, dir.resolve("store.log"));
  }

  /** SIGKILL: the store vanishes mid-request, as a crashed or OOM-killed server does. */
  void killStore() throws InterruptedException {
    closeJdbc();
    store.destroyForcibly();
    store.waitFor();
  }

  void startIngester() throws IOException, InterruptedException {
    ingesterStarts++;
    ingester =
        LocalServices.startCli(
            Llmlat.class.getName(),
            List.of(
                "ingest",
                "--kafka",
                bootstrap(),
                "--clickhouse-url",
                storeUrl(),
                "--group",
                GROUP,
                "--instance-id",
                "faults-ingest",
                "--linger-ms",
                "200"),
            ingesterLog());
    ChildJvm.awaitLine(ingester, ingesterLog(), "ingesting ", Duration.ofSeconds(90));
  }

  /** SIGKILL (ProcessHandle.destroyForcibly): no shutdown hook, no final commit. */
  void killIngester() throws InterruptedException {
    ingester.destroyForcibly();
    ingester.waitFor();
  }

  /** SIGTERM: the ingester writes and commits what it holds. */
  void stopIngester() throws InterruptedException {
    if (ingester != null && ingester.isAlive()) {
      ingester.destroy();
      if (!ingester.waitFor(60, TimeUnit.SECONDS)) {
        ingester.destroyForcibly();
      }
    }
  }

  Process ingester() {
    return ingester;
  }

  int ingesterStarts() {
    return ingesterStarts;
  }

  Path ingesterLog() {
    return dir.resolve("ingest.log");
  }

  /**
   * The last "holding N spans, heap M MB" line the ingester logged while the store was away: {N,
   * M}, or null.
   */
  long[] lastHolding() throws IOException {
    long[] last = null;
    for (String line : Files.readAllLines(ingesterLog())) {
      Matcher m = HOLDING.matcher(line);
      if (m.find()) {
        last = new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))};
      }
    }
    return last;
  }

  long countLogLines(String containing) throws IOException {
    return Files.readAllLines(ingesterLog()).stream().filter(l -> l.contains(containing)).count();
  }

  /** The store over HTTP with the official driver (reopened after a store restart). */
  JdbcClickHouse store() {
    if (jdbc == null) {
      jdbc = JdbcClickHouse.open(StoreConfig.server(storeUrl(), null, null));
    }
    return jdbc;
  }

  private void closeJdbc() {
    if (jdbc != null) {
      jdbc.close();
      jdbc = null;
    }
  }

  /** Rows, distinct (TraceId, SpanId) and keys stored more than once in otel_traces. */
  static final String STORED_SPANS_SQL =
      "SELECT sum(c), count(), countIf(c > 1) FROM "
          + "(SELECT TraceId, SpanId, count() AS c FROM otel_traces GROUP BY TraceId, SpanId)";

  StoredSpans storedSpans() {
    List<String> row = store().query(STORED_SPANS_SQL).rows().get(0);
    return new StoredSpans(parse(row.get(0)), parse(row.get(1)), parse(row.get(2)));
  }

  long count(String table) {
    return parse(store().query("SELECT count() FROM " + table).single());
  }

  private static long parse(String v) {
    return v == null || v.isEmpty() || v.equals("\\N") ? 0 : Long.parseLong(v);
  }

  /** What otel_traces holds. */
  record StoredSpans(long rows, long distinct, long duplicatedKeys) {
    FaultResult result(
        String scenario, long sent, long dlq, Map<String, String> figures, List<String> problems) {
      long lost = Math.max(0, sent - distinct);
      long foundOnce = distinct - duplicatedKeys;
      if (distinct > sent) {
        problems = new ArrayList<>(problems);
        problems.add((distinct - sent) + " spans stored that were never sent");
      }
      return new FaultResult(
          scenario, sent, foundOnce, lost, rows - distinct, dlq, figures, problems);
    }
  }

  /** Records on {@code topic} not yet committed by the ingester's group (0: everything stored). */
  long uncommitted(String topic) {
    try (Admin admin = admin()) {
      Map<TopicPartition, OffsetAndMetadata> committed =
          admin
              .listConsumerGroupOffsets(GROUP)
              .partitionsToOffsetAndMetadata()
              .get(30, TimeUnit.SECONDS);
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get(30, TimeUnit.SECONDS)
          .get(topic)
          .partitions()
          .forEach(p -> latest.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
      long behind = 0;
      for (var e : admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).entrySet()) {
        OffsetAndMetadata c = committed.get(e.getKey());
        behind += e.getValue().offset() - (c == null ? 0 : c.offset());
      }
      return behind;
    } catch (Exception e) {
      throw new IllegalStateException(
          "cannot read the ingester's committed offsets at " + bootstrap() + ": " + e, e);
    }
  }

  /**
   * Waits until the ingester committed everything on the span topic; fails if it dies or stalls
   * past {@code timeout}.
   */
  void awaitDrained(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    long behind = -1;
    while (System.nanoTime() < deadline) {
      behind = uncommitted(LlmlatTopics.SPANS);
      if (behind == 0) {
        return;
      }
      if (!ingester.isAlive()) {
        throw new IllegalStateException(
            "the ingester died with "
                + behind
                + " records uncommitted; see "
                + ingesterLog()
                + ChildJvm.tail(ingesterLog(), 10));
      }
      Thread.sleep(250);
    }
    throw new IllegalStateException(
        "the ingester still had "
            + behind
            + " records uncommitted after "
            + timeout.toSeconds()
            + " s; see "
            + ingesterLog()
            + ChildJvm.tail(ingesterLog(), 10));
  }

  /** Every record of {@code topic} from the beginning (read committed). */
  List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
    Map<String, Object> p = new HashMap<>();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(i -> new TopicPartition(topic, i.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "could not read " + topic + " to its end within 2 minutes");
        }
        consumer.poll(Duration.ofMillis(200)).forEach(out::add);
      }
    }
    return out;
  }

  @Override
  public void close() {
    closeJdbc();
    try {
      stopIngester();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (store != null) {
      store.destroy();
      try {
        store.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      store.destroyForcibly();
    }
    if (broker != null) {
      broker.stop(Duration.ofSeconds(20));
    }
  }
}
