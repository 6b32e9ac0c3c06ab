package dev.llmlat.bench;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Attribution throughput from the store (requests/s for synthetic three-layer requests, against a
 * plain SELECT of the same spans in the same run), and the latency of one {@code explain} on a
 * store holding many spans.
 */
public final class AnalyzeBenchmark {
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
      long t0 = System.nanoTime();
      List<List<String>> raw =
          store
              .query(
                  "SELECT TraceId, SpanId, toJSONString(SpanAttributes), toJSONString(Events.Name)"
                      + " FROM otel_traces")
              .rows();
      double rawSeconds = (System.nanoTime() - t0) / 1e9;
      t0 = System.nanoTime();
      Analyzer.Summary summary = new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true);
      double seconds = (System.nanoTime() - t0) / 1e9;
      out.printf(
          "plain SELECT of the same spans:  %,12.0f spans/s (%,d rows in %.2f s)%n",
          raw.size() / rawSeconds, raw.size(), rawSeconds);
      out.printf(
          "analyze (read, align, attribute, write): %,12.0f requests/s = %,.0f spans/s (%,d requests in %.2f s); "
              + "ratio to the plain SELECT %.2f%n",
          summary.written() / seconds,
          spans / seconds,
          summary.written(),
          seconds,
          (spans / seconds) / (raw.size() / rawSeconds));
      out.flush();
      // what the queue breakdown costs: the same re-attribution with and without it, alternating
      double[] ratios = new double[3];
      for (int round = 0; round < ratios.length; round++) {
        double with = reattributeSeconds(new Analyzer(store));
        double without = reattributeSeconds(new Analyzer(store).withoutQueueBreakdown());
        ratios[round] = without / with;
        out.printf(
            "round %d: re-attribute with the queue breakdown %.2f s, without %.2f s: speed with it %.2f of without%n",
            round + 1, with, without, ratios[round]);
        out.flush();
      }
      java.util.Arrays.sort(ratios);
      out.printf(
          "queue breakdown: analyze runs at %.2f of its speed without it (median of %d alternating rounds)%n",
          ratios[ratios.length / 2], ratios.length);
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
