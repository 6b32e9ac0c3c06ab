package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.live.LiveAttributor;
import dev.llmlat.live.LiveConfig;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.services.KafkaCluster;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A three-node KRaft cluster on loopback (replication factor 3, {@code min.insync.replicas} 2). Two
 * gateways' publishers ({@code acks=all}) export the spans of 300 requests while the ingester
 * stores them in the embedded store and the live attributor attributes them; after a third of them
 * the broker leading the span topic's partition 0 is killed with SIGKILL. Every span sent is stored
 * once, every request has one attribution row, and it equals what {@code analyze} finds in the
 * spans the ingester stored.
 */
class KafkaClusterFailoverTest {
  static final int PARTITIONS = 6;
  static final long BASE = 1_795_990_000_000_000_000L;
  static final long MS = 1_000_000L;

  @TempDir Path dir;

  static long count(EmbeddedClickHouse store, String sql) {
    return Long.parseLong(store.query(sql).single());
  }

  static TopicDescription describe(Admin admin, String topic) {
    try {
      return admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get(10, TimeUnit.SECONDS)
          .get(topic);
    } catch (InterruptedException | ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot describe " + topic, e);
    }
  }

  /** True when no partition of the topic has the node as its leader or in its in-sync replicas. */
  static boolean leftEveryIsr(Admin admin, String topic, int node) {
    return describe(admin, topic).partitions().stream()
        .allMatch(
            p ->
                (p.leader() != null && p.leader().id() != node)
                    && p.isr().stream().noneMatch(n -> n.id() == node));
  }

  @Test
  void noSpanLostOrDuplicatedAndEveryRequestAttributedOnceThroughABrokerKill() throws Exception {
    String topic = "cluster_spans";
    int batches = 30;
    int perBatch = 10;
    int killAfter = 10;
    try (KafkaCluster cluster = KafkaCluster.start(dir.resolve("kafka"), 3, 2);
        EmbeddedClickHouse store =
            EmbeddedClickHouse.openConfined(
                dir.resolve("clickhouse"), EngineLibrary.locate(), Confinement.STRICT);
        Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers()))) {
      SchemaMigrator.bundled().migrate(store);
      SpanTopics.ensure(admin, topic, PARTITIONS, (short) 3);
      for (String t : List.of(topic, LlmlatTopics.deadLetterTopic(topic))) {
        assertThat(describe(admin, t).partitions())
            .as(t + "'s replicas")
            .allSatisfy(
                p -> {
                  assertThat(p.replicas()).hasSize(3);
                  assertThat(p.isr()).hasSize(3);
                });
      }
      ConfigResource spansConfig = new ConfigResource(ConfigResource.Type.TOPIC, topic);
      assertThat(
              admin
                  .describeConfigs(List.of(spansConfig))
                  .all()
                  .get(10, TimeUnit.SECONDS)
                  .get(spansConfig)
                  .get("min.insync.replicas")
                  .value())
          .isEqualTo("2");
      int victim =
          describe(admin, topic).partitions().stream()
              .filter(p -> p.partition() == 0)
              .map(TopicPartitionInfo::leader)
              .findFirst()
              .orElseThrow()
              .id();

      IngesterConfig ingest =
          IngesterConfig.builder(cluster.bootstrapServers())
              .topic(topic)
              .groupId("g-" + topic)
              .maxBatchSpans(300)
              .linger(Duration.ofMillis(200))
              .reportInterval(Duration.ZERO)
              .sessionTimeout(Duration.ofSeconds(6))
              .build();
      LiveConfig live =
          LiveConfig.builder(cluster.bootstrapServers(), dir.resolve("live-state"))
              .topic(topic)
              .applicationId("live-" + topic)
              .grace(Duration.ofSeconds(1))
              .reportInterval(Duration.ZERO)
              .sessionTimeout(Duration.ofSeconds(6))
              .build();
      try (SpanIngester ingester = new SpanIngester(ingest, store).start();
          LiveAttributor attributor = new LiveAttributor(live, store).start();
          SpanPublisher gatewayA = new SpanPublisher(cluster.bootstrapServers(), topic);
          SpanPublisher gatewayB = new SpanPublisher(cluster.bootstrapServers(), topic)) {
        Await.until(
            () -> ingester.isRunning() && attributor.isRunning(),
            "the ingester and the live attributor to run",
            90);

        // 30 batches of 10 requests, one every 200 ms, from two gateways in turn; the broker is
        // killed after the 10th
        List<DemoTraces.Request> requests = new ArrayList<>();
        long spansSent = 0;
        for (int b = 0; b < batches; b++) {
          ExportTraceServiceRequest spans =
              new DemoTraces(300 + b, BASE + b * 400L * MS).generate(perBatch, requests);
          SpanPublisher gateway = b % 2 == 0 ? gatewayA : gatewayB;
          gateway.publish(spans);
          gateway.flush(); // acks=all: on two replicas at least once this returns
          spansSent += SpanPublisher.spanCount(spans);
          if (b == killAfter - 1) {
            KafkaBroker killed = cluster.node(victim);
            killed.kill(); // SIGKILL: no controlled shutdown, its leaderships are taken over
            assertThat(killed.isAlive()).isFalse();
          }
          Thread.sleep(200);
        }
        assertThat(requests).hasSize(batches * perBatch);
        Await.until(
            () -> leftEveryIsr(admin, topic, victim),
            "the killed broker " + victim + " to leave every ISR of " + topic,
            30);

        long sent = spansSent;
        String in = DemoTraces.sqlList(requests);
        Await.until(
            () -> count(store, "SELECT count() FROM otel_traces") >= sent,
            sent + " spans stored",
            90);
        Await.until(
            () ->
                count(
                        store,
                        "SELECT count() FROM llm_request_attribution FINAL WHERE TraceId IN " + in)
                    == requests.size(),
            requests.size() + " requests attributed",
            90);
        assertThat(ingester.failure()).isNull();
        assertThat(attributor.failure()).isNull();

        // every span sent stored once, none dead-lettered
        assertThat(count(store, "SELECT count() FROM otel_traces")).isEqualTo(sent);
        assertThat(count(store, "SELECT uniqExact(TraceId, SpanId) FROM otel_traces"))
            .isEqualTo(sent);
        assertThat(ingester.metrics().snapshot().deadLettered()).isZero();

        // every request one row, and no row for anything not sent
        Map<String, Long> rowsPerTrace = new TreeMap<>();
        for (List<String> r :
            store
                .query(
                    "SELECT TraceId, count() FROM llm_request_attribution FINAL GROUP BY TraceId")
                .rows()) {
          rowsPerTrace.put(r.get(0), Long.parseLong(r.get(1)));
        }
        Map<String, Long> once = new TreeMap<>();
        requests.forEach(r -> once.put(r.traceIdHex(), 1L));
        assertThat(rowsPerTrace).isEqualTo(once);
        assertThat(
                store
                    .query(
                        "SELECT DISTINCT TtftStartLayer, AnalyzerVersion FROM llm_request_attribution FINAL")
                    .rows())
            .containsExactly(List.of("gateway", LiveAttributor.VERSION));

        // analyze over the spans the ingester stored: its rows replace live's and equal them
        Map<String, List<String>> liveRows = LiveAttributionScaleOutTest.rows(store, requests);
        assertThat(
                new Analyzer(store).analyze(BASE - 1_000 * MS, BASE + 60_000 * MS, false).written())
            .isEqualTo(requests.size());
        assertThat(
                store
                    .query("SELECT DISTINCT AnalyzerVersion FROM llm_request_attribution FINAL")
                    .single())
            .isEqualTo(Analyzer.VERSION);
        assertThat(LiveAttributionScaleOutTest.rows(store, requests)).isEqualTo(liveRows);
      }
    }
  }
}
