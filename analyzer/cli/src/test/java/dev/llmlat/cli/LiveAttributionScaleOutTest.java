package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.spans.SpanRouter;
import dev.llmlat.live.LiveAttributor;
import dev.llmlat.live.internal.TracePartitioner;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.KafkaBrokerExtension;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three `llmlat attribute --live` processes with one application id on a six-partition span topic,
 * writing through `store serve`'s HTTP interface into one embedded store, while requests stream in;
 * one is killed with SIGKILL mid-stream. Every request ends up attributed exactly once in FINAL,
 * equal (components, TTFT) to what `analyze` computes from the same spans in the store; the killed
 * instance's traces are finished by the others from its state stores' changelogs (their late
 * gateway spans find the engine spans sent before the kill), late spans change the row, and the
 * killed instance restarted over its state directory takes a share of the partitions again.
 */
class LiveAttributionScaleOutTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();
  static final int PARTITIONS = 6;
  static final long BASE = 1_795_980_000_000_000_000L;
  static final long MS = 1_000_000L;

  @TempDir Path dir;
  final List<Process> instances = new ArrayList<>();

  @AfterEach
  void stopInstances() {
    instances.forEach(Process::destroyForcibly);
  }

  /** Starts instance {@code instances.size()} over state directory {@code n}. */
  void start(String bootstrap, String storeUrl, String topic, int n) throws IOException {
    int log = instances.size();
    instances.add(
        ChildJvm.start(
            List.of(
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1"),
            "dev.llmlat.cli.Llmlat",
            List.of(
                "attribute",
                "--live",
                "--kafka",
                bootstrap,
                "--clickhouse-url",
                storeUrl,
                "--topic",
                topic,
                "--application-id",
                "live-" + topic,
                "--grace",
                "1s",
                "--state-dir",
                dir.resolve("state-" + n).toString(),
                "--session-timeout-ms",
                "6000",
                "--report-interval-ms",
                "1000"),
            log(log)));
  }

  Path log(int n) {
    return dir.resolve("live-" + n + ".log");
  }

  /** The partitions the instance's log says it owns now. */
  Set<Integer> owned(int n) {
    try {
      return IngesterScaleOutTest.owned(Files.exists(log(n)) ? Files.readString(log(n)) : "");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static long count(EmbeddedClickHouse store, String sql) {
    return Long.parseLong(store.query(sql).single());
  }

  /** The rows of these traces in FINAL: trace id -> TTFT, start layer, adapter, components. */
  static Map<String, List<String>> rows(
      EmbeddedClickHouse store, List<DemoTraces.Request> requests) {
    String components =
        String.join(", ", TtftComponent.all().stream().map(TtftComponent::column).toList());
    Map<String, List<String>> out = new TreeMap<>();
    for (List<String> r :
        store
            .query(
                "SELECT TraceId, TtftNs, TtftStartLayer, EngineAdapter, "
                    + components
                    + " FROM llm_request_attribution FINAL WHERE TraceId IN "
                    + DemoTraces.sqlList(requests))
            .rows()) {
      out.put(r.get(0), r.subList(1, r.size()));
    }
    return out;
  }

  /** The gateway layer's spans of the {@code held} traces (or of the others). */
  static ResourceSpans gateway(ExportTraceServiceRequest spans, Set<String> held, boolean ofHeld) {
    ResourceSpans.Builder rs = spans.getResourceSpans(0).toBuilder();
    ScopeSpans.Builder scope = rs.getScopeSpansBuilder(0);
    List<Span> kept =
        scope.getSpansList().stream()
            .filter(
                s ->
                    held.contains(HexFormat.of().formatHex(s.getTraceId().toByteArray())) == ofHeld)
            .toList();
    scope.clearSpans().addAllSpans(kept);
    return rs.build();
  }

  @Test
  void instancesShareThePartitionsAndAttributeEveryRequestOnceThroughAKill() throws Exception {
    String topic = "live_spans";
    int batches = 30;
    try (EmbeddedClickHouse store =
            EmbeddedClickHouse.openConfined(
                dir.resolve("clickhouse"), EngineLibrary.locate(), Confinement.STRICT);
        ClickHouseHttpServer http = ClickHouseHttpServer.start(store, 0);
        Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
        SpanPublisher publisher = new SpanPublisher(broker.bootstrapServers(), topic)) {
      SchemaMigrator.bundled().migrate(store);
      SpanTopics.ensure(admin, topic, PARTITIONS);
      for (int n = 0; n < 3; n++) {
        start(broker.bootstrapServers(), http.url(), topic, n);
      }
      Await.until(
          () -> IntStream.range(0, 3).allMatch(n -> owned(n).size() == 2),
          "each of 3 instances to own 2 partitions",
          120);
      Set<Integer> killedOwned = owned(0);

      // 30 batches of 10 requests, one every 300 ms; instance 0 is killed after the 11th
      List<DemoTraces.Request> all = new ArrayList<>();
      List<ExportTraceServiceRequest> sent = new ArrayList<>();
      List<DemoTraces.Request> late = new ArrayList<>();
      ExportTraceServiceRequest.Builder lateGateway = ExportTraceServiceRequest.newBuilder();
      for (int b = 0; b < batches; b++) {
        List<DemoTraces.Request> requests = new ArrayList<>();
        ExportTraceServiceRequest spans =
            new DemoTraces(100 + b, BASE + b * 400 * MS).generate(10, requests);
        all.addAll(requests);
        sent.add(spans);
        if (b < 10) {
          // requests of the instance to be killed: their gateway spans wait until it is dead
          Set<String> held = new TreeSet<>();
          for (DemoTraces.Request r : requests) {
            if (killedOwned.contains(TracePartitioner.partitionOf(r.traceIdHex(), PARTITIONS))) {
              late.add(r);
              held.add(r.traceIdHex());
            }
          }
          lateGateway.addResourceSpans(gateway(spans, held, true));
          spans = spans.toBuilder().setResourceSpans(0, gateway(spans, held, false)).build();
        }
        publisher.publish(spans);
        publisher.flush();
        if (b == 10) {
          instances.get(0).destroyForcibly(); // SIGKILL: no commit, no leaving the group
          assertThat(instances.get(0).waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        Thread.sleep(300);
      }
      assertThat(late).as("batches in the killed instance's partitions").isNotEmpty();

      // the survivors take its partitions over and every request is attributed, once
      Await.until(
          () -> {
            Set<Integer> union = new TreeSet<>(owned(1));
            union.addAll(owned(2));
            return union.size() == PARTITIONS;
          },
          "the surviving instances to own all " + PARTITIONS + " partitions",
          60);
      String in = DemoTraces.sqlList(all);
      Await.until(
          () ->
              count(
                      store,
                      "SELECT count() FROM llm_request_attribution FINAL WHERE TraceId IN " + in)
                  == all.size(),
          all.size() + " requests attributed",
          90);
      Map<String, List<String>> early = rows(store, late);
      assertThat(early.values())
          .as("late traces before their gateway spans")
          .allSatisfy(r -> assertThat(r.get(1)).isEqualTo("engine"));

      // the killed instance restarted over its old state directory: it takes a share of the
      // partitions again
      start(broker.bootstrapServers(), http.url(), topic, 0);
      Await.until(
          () ->
              !owned(3).isEmpty()
                  && IntStream.of(1, 2, 3).map(n -> owned(n).size()).sum() == PARTITIONS,
          "the restarted instance to own partitions again",
          90);

      // the late gateway spans: the engine spans they join were sent to the dead instance, and come
      // from the changelog
      publisher.publish(lateGateway.build());
      publisher.flush();
      Await.until(
          () -> rows(store, late).values().stream().allMatch(r -> r.get(1).equals("gateway")),
          "the late traces attributed again from the gateway",
          60);
      Map<String, List<String>> live = rows(store, all);
      assertThat(live).hasSize(all.size());
      assertThat(live.values())
          .allSatisfy(r -> assertThat(r.get(2)).isEqualTo("llmlat scheduler SDK"));
      assertThat(
              store
                  .query(
                      "SELECT DISTINCT AnalyzerVersion FROM llm_request_attribution FINAL WHERE TraceId IN "
                          + in)
                  .single())
          .isEqualTo(LiveAttributor.VERSION);

      // analyze on the same spans in the store: its rows replace live's and equal them
      SpanRouter rows = new SpanRouter();
      sent.forEach(rows::add);
      rows.add(lateGateway.build());
      rows.insertInto(store, null);
      assertThat(
              new Analyzer(store).analyze(BASE - 1_000 * MS, BASE + 60_000 * MS, false).written())
          .isEqualTo(all.size());
      assertThat(
              store
                  .query(
                      "SELECT DISTINCT AnalyzerVersion FROM llm_request_attribution FINAL WHERE TraceId IN "
                          + in)
                  .single())
          .isEqualTo(Analyzer.VERSION);
      assertThat(rows(store, all)).isEqualTo(live);
    }
  }
}
