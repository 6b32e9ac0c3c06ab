package dev.llmlat.bench;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.stats.Bootstrap;
import dev.llmlat.stats.Quantiles;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Attribution of a tensor-parallel export's requests against the single-GPU path's, per kernel, in
 * one run and one store: the two exports of {@link TensorParallelImportBenchmark} (the TP one's
 * time copies placed after the single one's with a gap wider than the analyzer's read margins, its
 * trace ids its own), imported as {@code llmlat import} does, with the capture's engine requests
 * ({@link CaptureRequests}) for every time copy; then {@code analyze} of each export's window,
 * alternating (single, TP, single, ..., single), every request each time. Kernels/s is the export's
 * kernels in the store over the analyze's seconds; a TP round's ratio is against the mean of the
 * single runs around it.
 */
final class TensorParallelAnalyzeBenchmark {
  /** The engine's service name, for the GPU spans and the engine spans alike (one engine). */
  static final String SERVICE = "engine";

  /**
   * Time copies left empty between the two exports: more than the analyzer reads around a chunk (2
   * minutes).
   */
  private static final int GAP_COPIES = 16;

  private final TensorParallelRuns runs;
  private final Path scratch;
  private final Path engineLibrary;

  TensorParallelAnalyzeBenchmark(TensorParallelRuns runs, Path scratch, Path engineLibrary) {
    this.runs = runs;
    this.scratch = scratch;
    this.engineLibrary = engineLibrary;
  }

  void run(PrintWriter out) throws Exception {
    Path capture = runs.capture();
    int ranks = runs.ranks();
    int copies = runs.copies();
    int rounds = runs.rounds();
    int warmup = runs.warmup();
    CaptureRequests requests = CaptureRequests.beside(capture);
    Files.createDirectories(scratch);
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(scratch.resolve("clickhouse"), engineLibrary)) {
      SchemaMigrator.bundled().migrate(store);
      int singleCopies = ranks * copies;
      Side single =
          load(
              store,
              requests,
              TensorParallelExport.build(
                  capture, scratch.resolve("single.sqlite"), 1, singleCopies, 0),
              "single-GPU path: rank 0 alone",
              out);
      Side tp =
          load(
              store,
              requests,
              TensorParallelExport.build(
                  capture,
                  scratch.resolve("tp" + ranks + ".sqlite"),
                  ranks,
                  copies,
                  singleCopies + GAP_COPIES),
              "TP-" + ranks,
              out);
      Analyzer analyzer = new Analyzer(store);
      double[] singleRates = new double[rounds];
      double[] tpRates = new double[rounds];
      double[] ratios = new double[rounds];
      double before = single.analyze(analyzer);
      for (int round = 1; round <= warmup + rounds; round++) {
        double parallel = tp.analyze(analyzer);
        double after = single.analyze(analyzer);
        double singleRate = single.kernels / ((before + after) / 2);
        double tpRate = tp.kernels / parallel;
        out.printf(
            Locale.ROOT,
            "%s %d: single %d requests in %.2f s and %.2f s = %.0f kernels/s; TP-%d %d requests in %.2f s"
                + " = %.0f kernels/s; ratio %.2f%n",
            round <= warmup ? "warm-up round" : "round",
            round,
            single.requests,
            before,
            after,
            singleRate,
            ranks,
            tp.requests,
            parallel,
            tpRate,
            tpRate / singleRate);
        out.flush();
        if (round > warmup) {
          int i = round - warmup - 1;
          singleRates[i] = singleRate;
          tpRates[i] = tpRate;
          ratios[i] = tpRate / singleRate;
        }
        before = after;
      }
      out.printf(
          Locale.ROOT,
          "attributed: single %s; TP-%d %s%n",
          single.waits(store),
          ranks,
          tp.waits(store));
      out.printf(
          Locale.ROOT,
          "rows written: single %s; TP-%d %s%n",
          AttributionRowsHash.of(store, single.fromNs, single.toNs),
          ranks,
          AttributionRowsHash.of(store, tp.fromNs, tp.toNs));
      Bootstrap.Interval interval = Bootstrap.of(ratios, Quantiles::median);
      out.printf(
          Locale.ROOT,
          "median of rounds %d-%d: analyze single-GPU path %.0f kernels/s (%.0f requests/s); TP-%d %.0f"
              + " kernels/s (%.0f requests/s); ratio TP-%d/single %.2f (bootstrap 95%% interval %.2f-%.2f)%n",
          warmup + 1,
          warmup + rounds,
          Quantiles.median(singleRates),
          Quantiles.median(singleRates) * single.requests / single.kernels,
          ranks,
          Quantiles.median(tpRates),
          Quantiles.median(tpRates) * tp.requests / tp.kernels,
          ranks,
          Quantiles.median(ratios),
          interval.low(),
          interval.high());
      out.flush();
    } finally {
      dev.llmlat.services.ChildJvm.deleteRecursively(scratch);
    }
  }

  /** One export in the store: its window, kernels and requests. */
  private record Side(long fromNs, long toNs, long kernels, int requests) {

    /** Attributes every request of the window again; returns the seconds it took. */
    double analyze(Analyzer analyzer) {
      long t0 = System.nanoTime();
      Analyzer.Summary s = analyzer.analyze(fromNs, toNs, false);
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (s.written() != requests) {
        throw new IllegalStateException(
            "analyze attributed "
                + s.written()
                + " of the "
                + requests
                + " requests in its window");
      }
      return seconds;
    }

    String waits(EmbeddedClickHouse store) {
      return store
          .query(
              "SELECT concat(toString(count()), ' requests, ', toString(countIf(RankWaitNs > 0)), '"
                  + " with a rank wait, median TTFT ', toString(round(median(TtftNs) / 1e6, 1)), ' ms')"
                  + " FROM llm_request_attribution FINAL WHERE ArrivalTime >= fromUnixTimestamp64Nano("
                  + fromNs
                  + ")"
                  + " AND ArrivalTime <= fromUnixTimestamp64Nano("
                  + toNs
                  + ")")
          .single();
    }
  }

  /**
   * Imports {@code built} and the engine requests of each of its time copies, as {@code llmlat
   * import} does.
   */
  private static Side load(
      EmbeddedClickHouse store,
      CaptureRequests requests,
      TensorParallelExport.Built built,
      String what,
      PrintWriter out)
      throws Exception {
    TensorParallelImportBenchmark.describe(out, built, what);
    long t0 = System.nanoTime();
    try (StoreImportTarget target = new StoreImportTarget(store)) {
      GpuImporter.importFile(
          built.file(),
          ExportFormat.NSYS_SQLITE,
          ImportOptions.defaults().withServiceName(SERVICE),
          target);
      target.commit();
    }
    OtelTracesRowEncoder engine = new OtelTracesRowEncoder();
    for (int k = built.firstCopy(); k < built.firstCopy() + built.copies(); k++) {
      engine.add(requests.spans(k, k * built.periodNs()));
    }
    engine.insertInto(store, null);
    Files.delete(built.file());
    long from = built.firstUnixNs() - 1_000_000_000L;
    long to = built.lastUnixNs();
    long kernels =
        Long.parseLong(
            store
                .query(
                    "SELECT count() FROM gpu_kernels WHERE Kind = 'kernel'"
                        + " AND Start >= fromUnixTimestamp64Nano("
                        + from
                        + ") AND Start <= fromUnixTimestamp64Nano("
                        + to
                        + ")")
                .single());
    if (kernels != built.kernels()) {
      throw new IllegalStateException(
          "the store holds " + kernels + " of the export's " + built.kernels() + " kernels");
    }
    out.printf(
        Locale.ROOT,
        "  imported with %d requests in %.1f s%n",
        requests.size() * built.copies(),
        (System.nanoTime() - t0) / 1e9);
    out.flush();
    return new Side(from, to, kernels, requests.size() * built.copies());
  }
}
