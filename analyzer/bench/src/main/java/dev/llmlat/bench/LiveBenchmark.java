package dev.llmlat.bench;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.live.LiveAttributor;
import dev.llmlat.live.LiveConfig;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.stats.Quantiles;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Live attribution with one instance (a real broker, the embedded store): requests/s attributed
 * from a backlog on the topic, against {@code analyze} on the same spans in the store in the same
 * run; then, at a steady rate of requests with real-time timestamps, the lag from the moment a
 * request's last span was acknowledged by the broker to its row ({@code AnalyzedAt}), p50 and p99.
 * The lag includes the grace by design: a request is complete only once no span came for it.
 */
public final class LiveBenchmark {
  private static final long MS = 1_000_000L;

  /** What to run. */
  public record Config(
      int requests,
      int rate,
      Duration steady,
      Duration grace,
      int partitions,
      Path scratch,
      Path engineLibrary) {
    public Config {
      if (requests < 1000) {
        throw new IllegalArgumentException("--requests must be at least 1000, got " + requests);
      }
      if (rate < 1 || rate > 10_000) {
        throw new IllegalArgumentException("--rate must be 1 to 10000 requests/s, got " + rate);
      }
      if (steady.toSeconds() < 2 || steady.toMinutes() > 60) {
        throw new IllegalArgumentException(
            "--seconds must be 2 to 3600, got " + steady.toSeconds());
      }
      if (partitions < 1 || partitions > 64) {
        throw new IllegalArgumentException("--partitions must be 1 to 64, got " + partitions);
      }
    }
  }

  /** The figures of one run. */
  public record Result(
      double liveRequestsPerSec,
      double analyzeRequestsPerSec,
      double lagP50Ms,
      double lagP99Ms,
      int lagSamples) {}

  private final Config config;

  public LiveBenchmark(Config config) {
    this.config = config;
  }

  public Result run(PrintWriter out) throws IOException, InterruptedException {
    Files.createDirectories(config.scratch());
    KafkaBroker broker =
        KafkaBroker.start(
            new KafkaBroker.Config(
                config.scratch().resolve("kafka"),
                config.scratch().resolve("kafka.log"),
                config.scratch().resolve("kafka.pid"),
                0,
                0));
    String topic = "bench_live";
    try (EmbeddedClickHouse store =
            EmbeddedClickHouse.open(
                config.scratch().resolve("clickhouse"), config.engineLibrary());
        Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
        SpanPublisher publisher = new SpanPublisher(broker.bootstrapServers(), topic)) {
      SchemaMigrator.bundled().migrate(store);
      SpanTopics.ensure(admin, topic, config.partitions());

      // 1. a backlog of requests on the topic, then one instance started over it
      long base = 1_795_946_400_000_000_000L;
      List<ExportTraceServiceRequest> backlog = new ArrayList<>();
      long spans = 0;
      for (int done = 0; done < config.requests(); done += 1000) {
        ExportTraceServiceRequest batch =
            new DemoTraces(7 + done, base + done * 40 * MS)
                .generate(Math.min(1000, config.requests() - done), new ArrayList<>());
        backlog.add(batch);
        publisher.publish(batch);
        spans += SpanPublisher.spanCount(batch);
      }
      publisher.flush();
      out.printf(
          "backlog: %,d requests, %,d spans on %s (%d partitions); grace %d ms%n",
          config.requests(), spans, topic, config.partitions(), config.grace().toMillis());
      out.flush();
      LiveConfig live =
          LiveConfig.builder(broker.bootstrapServers(), config.scratch().resolve("live-state"))
              .topic(topic)
              .applicationId("bench-live")
              .grace(config.grace())
              .reportInterval(Duration.ZERO)
              .build();
      try (LiveAttributor attributor = new LiveAttributor(live, store).start()) {
        while (!attributor.isRunning()) {
          failIfStopped(attributor);
          Thread.sleep(10);
        }
        long t0 = System.nanoTime();
        while (attributed(attributor) < config.requests()) {
          failIfStopped(attributor);
          Thread.sleep(5);
        }
        double seconds = (System.nanoTime() - t0) / 1e9 - config.grace().toMillis() / 1e3;
        double liveRate = config.requests() / seconds;
        out.printf(
            "live, one instance:  %,10.0f requests/s (%,d requests in %.2f s after it ran, the last grace not counted;"
                + " %,d attributed again: spans of theirs came later than the grace)%n",
            liveRate, config.requests(), seconds, attributor.metrics().lateReattributions());
        out.flush();

        // 2. analyze on the same spans in the store (their insert not counted)
        OtelTracesRowEncoder rows = new OtelTracesRowEncoder();
        backlog.forEach(rows::add);
        rows.insertInto(store, null);
        t0 = System.nanoTime();
        Analyzer.Summary summary = new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, false);
        double analyzeRate = summary.written() / ((System.nanoTime() - t0) / 1e9);
        out.printf(
            "analyze, same spans: %,10.0f requests/s (%,d requests)%n",
            analyzeRate, summary.written());
        out.printf("ratio live / analyze: %.2f%n", liveRate / analyzeRate);
        out.flush();

        // 3. a steady rate: each request's spans sent as they end, the broker's acknowledgement
        // timed
        Map<String, Long> ackedMs = steady(publisher, config.rate(), config.steady());
        List<String> ids = new ArrayList<>(ackedMs.keySet());
        long deadline =
            System.nanoTime() + config.grace().toNanos() + Duration.ofSeconds(60).toNanos();
        Map<String, Object> params = new HashMap<>();
        params.put(
            "ids", "[" + String.join(",", ids.stream().map(id -> "'" + id + "'").toList()) + "]");
        String attributedSql =
            "SELECT uniqExact(TraceId) FROM llm_request_attribution WHERE TraceId IN {ids:Array(String)}";
        while (Long.parseLong(store.query(attributedSql, params).single()) < ids.size()
            && System.nanoTime() < deadline) {
          failIfStopped(attributor);
          Thread.sleep(100);
        }
        long[] lags =
            store
                .query(
                    "SELECT TraceId, toUnixTimestamp64Milli(min(AnalyzedAt)) FROM llm_request_attribution"
                        + " WHERE TraceId IN {ids:Array(String)} GROUP BY TraceId",
                    params)
                .rows()
                .stream()
                .mapToLong(r -> Long.parseLong(r.get(1)) - ackedMs.get(r.get(0)))
                .sorted()
                .toArray();
        double p50 = lags.length == 0 ? Double.NaN : Quantiles.ofSorted(lags, 0.5);
        double p99 = lags.length == 0 ? Double.NaN : Quantiles.ofSorted(lags, 0.99);
        out.printf(
            "steady %d requests/s for %d s: last span -> row p50 %,.0f ms, p99 %,.0f ms (%,d of %,d requests;"
                + " grace %d ms included)%n",
            config.rate(),
            config.steady().toSeconds(),
            p50,
            p99,
            lags.length,
            ids.size(),
            config.grace().toMillis());
        out.flush();
        return new Result(liveRate, analyzeRate, p50, p99, lags.length);
      }
    } finally {
      broker.stop(Duration.ofSeconds(20));
      dev.llmlat.services.ChildJvm.deleteRecursively(config.scratch());
    }
  }

  /**
   * Publishes {@code rate} requests/s for {@code length}, every 100 ms the requests that ended in
   * it (stamped now); returns each request's trace id and when its record was acknowledged (Unix
   * ms).
   */
  private static Map<String, Long> steady(SpanPublisher publisher, int rate, Duration length)
      throws InterruptedException {
    Map<String, Long> acked = new HashMap<>();
    long start = System.nanoTime();
    long due = 0;
    for (long tick = 1; System.nanoTime() - start < length.toNanos(); tick++) {
      long now = (long) (rate * ((System.nanoTime() - start) / 1e9));
      int n = (int) (now - due);
      if (n > 0) {
        List<DemoTraces.Request> requests = new ArrayList<>();
        // requests stamped around now (DemoTraces spaces them 40 ms apart), sent as an exporter
        // flushes
        publisher.publish(
            new DemoTraces(1_000_000 + tick, System.currentTimeMillis() * MS - 250 * MS)
                .generate(n, requests));
        publisher.flush();
        long ack = System.currentTimeMillis();
        requests.forEach(r -> acked.put(r.traceIdHex(), ack));
        due = now;
      }
      long sleep = start + tick * 100 * MS - System.nanoTime();
      if (sleep > 0) {
        Thread.sleep(sleep / MS, (int) (sleep % MS));
      }
    }
    return acked;
  }

  /** Requests attributed at least once. */
  private static long attributed(LiveAttributor attributor) {
    return attributor.metrics().attributions() - attributor.metrics().lateReattributions();
  }

  private static void failIfStopped(LiveAttributor attributor) {
    if (attributor.failure() != null) {
      throw new IllegalStateException(
          "live attribution failed: " + attributor.failure(), attributor.failure());
    }
  }
}
