package dev.llmlat.bench;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.stats.Bootstrap;
import dev.llmlat.stats.Quantiles;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;

/**
 * Attribution throughput from the store (requests/s for synthetic three-layer requests, against a
 * plain SELECT of the same spans in the same run, in alternating rounds once the JVM is warm), and
 * the latency of one {@code explain} on a store holding many spans.
 */
public final class AnalyzeBenchmark {
  /**
   * Rounds after the first pass that are timed but left out (the JIT still compiles during the
   * first of them).
   */
  private static final int WARMUP_ROUNDS = 1;

  private static final int MEASURED_ROUNDS = 5;

  private final int requests;
  private final long explainSpans;
  private final Path scratch;
  private final Path engineLibrary;

  public AnalyzeBenchmark(int requests, long explainSpans, Path scratch, Path engineLibrary) {
    if (requests < 100) {
      throw new IllegalArgumentException("--requests must be at least 100");
    }
    this.requests = requests;
    this.explainSpans = explainSpans;
    this.scratch = scratch;
    this.engineLibrary = engineLibrary;
  }

  public void run(PrintWriter out) throws IOException {
    Files.createDirectories(scratch);
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(scratch.resolve("clickhouse"), engineLibrary)) {
      SchemaMigrator.bundled().migrate(store);
      long base = 1_795_946_400_000_000_000L;
      long spans = load(store, requests, base, 7);
      out.printf("store: %,d requests, %,d spans (gateway, engine, GPU layers)%n", requests, spans);
      out.flush();
      // The first pass runs on a cold JVM (the JIT compiles while it runs) against a native engine:
      // reported, not
      // measured. The measured rounds are the JVM's steady state: each times the plain SELECT, then
      // the same
      // analyze of a store whose attributions were removed, one after the other, and the ratio is
      // the round's.
      long t0 = System.nanoTime();
      Analyzer.Summary first = new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true);
      double firstSeconds = (System.nanoTime() - t0) / 1e9;
      out.printf(
          "first pass, cold JVM (JIT warm-up included): %,.0f requests/s (%,d requests in %.2f s)%n",
          first.written() / firstSeconds, first.written(), firstSeconds);
      out.flush();
      double[] rates = new double[MEASURED_ROUNDS];
      double[] selectRates = new double[MEASURED_ROUNDS];
      double[] ratios = new double[MEASURED_ROUNDS];
      for (int round = 1 - WARMUP_ROUNDS; round <= MEASURED_ROUNDS; round++) {
        t0 = System.nanoTime();
        int rows =
            store
                .query(
                    "SELECT TraceId, SpanId, toJSONString(SpanAttributes), toJSONString(Events.Name)"
                        + " FROM otel_traces")
                .rows()
                .size();
        double rawSeconds = (System.nanoTime() - t0) / 1e9;
        store.execute("TRUNCATE TABLE llm_request_attribution");
        t0 = System.nanoTime();
        Analyzer.Summary summary = new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (summary.written() != requests) {
          throw new IllegalStateException(
              "analyze attributed " + summary.written() + " of the " + requests + " requests");
        }
        double ratio = (spans / seconds) / (rows / rawSeconds);
        out.printf(
            "%s %d: plain SELECT %,d rows in %.2f s = %,.0f spans/s; analyze %,d requests in %.2f s = %,.0f spans/s;"
                + " ratio %.2f%n",
            round < 1 ? "warm-up round" : "round",
            round < 1 ? round + WARMUP_ROUNDS : round,
            rows,
            rawSeconds,
            rows / rawSeconds,
            summary.written(),
            seconds,
            spans / seconds,
            ratio);
        out.flush();
        if (round >= 1) {
          rates[round - 1] = summary.written() / seconds;
          selectRates[round - 1] = rows / rawSeconds;
          ratios[round - 1] = ratio;
        }
      }
      // what the last round wrote, to compare analyzer versions by (they must write the same rows)
      out.printf(
          "rows written by the last round: %s%n",
          AttributionRowsHash.of(store, 0, Long.MAX_VALUE / 2));
      double rate = Quantiles.median(rates);
      Bootstrap.Interval interval = Bootstrap.of(ratios, Quantiles::median);
      out.printf(
          "plain SELECT of the same spans:  %,12.0f spans/s (median of %d rounds)%n",
          Quantiles.median(selectRates), MEASURED_ROUNDS);
      out.printf(
          "analyze (read, align, attribute, write): %,12.0f requests/s = %,.0f spans/s (median of %d rounds, %,.0f-%,.0f"
              + " requests/s); ratio to the plain SELECT %.2f (rounds %.2f-%.2f, bootstrap 95%% interval %.2f-%.2f)%n",
          rate,
          rate * spans / requests,
          MEASURED_ROUNDS,
          min(rates),
          max(rates),
          Quantiles.median(ratios),
          min(ratios),
          max(ratios),
          interval.low(),
          interval.high());
      out.flush();
      // what the queue breakdown costs: the same re-attribution with and without it, alternating
      double[] costs = new double[3];
      for (int round = 0; round < costs.length; round++) {
        double with = reattributeSeconds(new Analyzer(store));
        double without = reattributeSeconds(new Analyzer(store).withoutQueueBreakdown());
        costs[round] = without / with;
        out.printf(
            "queue breakdown round %d: re-attribute with it %.2f s, without %.2f s: speed with it %.2f of without%n",
            round + 1, with, without, costs[round]);
        out.flush();
      }
      java.util.Arrays.sort(costs);
      out.printf(
          "queue breakdown: analyze runs at %.2f of its speed without it (median of %d alternating rounds)%n",
          costs[costs.length / 2], costs.length);
      out.flush();
      if (explainSpans > spans) {
        long more =
            load(store, (int) ((explainSpans - spans) / 7.5), base + 3_600_000_000_000L, 11);
        out.printf("store grown to %,d spans for explain%n", spans + more);
      }
      String traceId =
          store
              .query(
                  "SELECT TraceId FROM llm_request_attribution FINAL ORDER BY TtftNs DESC LIMIT 1")
              .single();
      Analyzer analyzer = new Analyzer(store);
      analyzer.explain(traceId); // first call: caches
      long[] times = new long[5];
      for (int i = 0; i < times.length; i++) {
        long t = System.nanoTime();
        analyzer.explain(traceId);
        times[i] = System.nanoTime() - t;
      }
      java.util.Arrays.sort(times);
      out.printf(
          "explain %s: median %.1f ms, worst %.1f ms over %d runs (store of %s spans)%n",
          traceId,
          times[2] / 1e6,
          times[4] / 1e6,
          times.length,
          store.query("SELECT count() FROM otel_traces").single());
      out.flush();
    } finally {
      dev.llmlat.services.ChildJvm.deleteRecursively(scratch);
    }
  }

  private static double min(double[] values) {
    return java.util.Arrays.stream(values).min().orElseThrow();
  }

  private static double max(double[] values) {
    return java.util.Arrays.stream(values).max().orElseThrow();
  }

  /** Seconds to attribute every request in the store again (rows replaced, as a re-run does). */
  private static double reattributeSeconds(Analyzer analyzer) {
    long t0 = System.nanoTime();
    analyzer.analyze(0, Long.MAX_VALUE / 2, false);
    return (System.nanoTime() - t0) / 1e9;
  }

  /**
   * Inserts {@code n} generated requests starting at {@code startNs}; returns the spans written.
   */
  static long load(EmbeddedClickHouse store, int n, long startNs, long seed) {
    long spans = 0;
    DemoTraces traces = new DemoTraces(seed, startNs);
    OtelTracesRowEncoder encoder = new OtelTracesRowEncoder();
    for (int done = 0; done < n; done += 1000) {
      ExportTraceServiceRequest batch =
          new DemoTraces(seed + done, startNs + done * 40_000_000L)
              .generate(Math.min(1000, n - done), new ArrayList<>());
      encoder.add(batch);
      if (encoder.rows() >= 100_000) {
        spans += encoder.rows();
        encoder.insertInto(store, null);
      }
    }
    spans += encoder.rows();
    encoder.insertInto(store, null);
    return spans;
  }
}
