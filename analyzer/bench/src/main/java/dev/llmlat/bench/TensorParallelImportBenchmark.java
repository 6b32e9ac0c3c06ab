package dev.llmlat.bench;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.stats.Bootstrap;
import dev.llmlat.stats.Quantiles;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The Nsight importer on a tensor-parallel export against the single-GPU path of the same size, in
 * one run: {@link TensorParallelExport} makes a TP-N export of the real capture (N rank processes,
 * time copies) and rank 0 alone repeated N times as many times (the same kernels). Imports
 * alternate (single, TP, single, TP, ..., single) and each TP import's ratio is against the mean of
 * the single imports just before and after it, since this machine's speed drifts over seconds. The
 * sink counts the spans and bytes of the encoded records, as {@link ImportBenchmark}'s does.
 */
final class TensorParallelImportBenchmark {
  private final TensorParallelRuns runs;

  TensorParallelImportBenchmark(TensorParallelRuns runs) {
    this.runs = runs;
  }

  void run(PrintWriter out) throws Exception {
    Path capture = runs.capture();
    int ranks = runs.ranks();
    int copies = runs.copies();
    int rounds = runs.rounds();
    int warmup = runs.warmup();
    Path dir = Files.createTempDirectory("llmlat-bench-tp-");
    try {
      TensorParallelExport.Built single =
          TensorParallelExport.build(capture, dir.resolve("single.sqlite"), 1, ranks * copies, 0);
      TensorParallelExport.Built tp =
          TensorParallelExport.build(
              capture, dir.resolve("tp" + ranks + ".sqlite"), ranks, copies, 0);
      describe(out, single, "single-GPU path: rank 0 alone");
      describe(out, tp, "TP-" + ranks);
      double[] singleRates = new double[rounds];
      double[] tpRates = new double[rounds];
      double[] ratios = new double[rounds];
      Measured before = importOnce(single.file());
      for (int round = 1; round <= warmup + rounds; round++) {
        Measured parallel = importOnce(tp.file());
        Measured after = importOnce(single.file());
        double singleSeconds = (before.seconds() + after.seconds()) / 2;
        double singleRate = before.report().kernels() / singleSeconds;
        double tpRate = parallel.report().kernels() / parallel.seconds();
        out.printf(
            Locale.ROOT,
            "%s %d: single %d kernels in %.2f s and %.2f s = %.0f kernels/s (CPU %.2f s);"
                + " TP-%d %d kernels (%d steps) in %.2f s = %.0f kernels/s (CPU %.2f s); ratio %.2f%n",
            round <= warmup ? "warm-up round" : "round",
            round,
            before.report().kernels(),
            before.seconds(),
            after.seconds(),
            singleRate,
            (before.cpuSeconds() + after.cpuSeconds()) / 2,
            ranks,
            parallel.report().kernels(),
            parallel.report().stepsMatched(),
            parallel.seconds(),
            tpRate,
            parallel.cpuSeconds(),
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
      Bootstrap.Interval interval = Bootstrap.of(ratios, Quantiles::median);
      out.printf(
          Locale.ROOT,
          "median of rounds %d-%d: single-GPU path %.0f kernels/s; TP-%d %.0f kernels/s;"
              + " ratio TP-%d/single %.2f (bootstrap 95%% interval %.2f-%.2f)%n",
          warmup + 1,
          warmup + rounds,
          Quantiles.median(singleRates),
          ranks,
          Quantiles.median(tpRates),
          ranks,
          Quantiles.median(ratios),
          interval.low(),
          interval.high());
      out.flush();
    } finally {
      dev.llmlat.services.ChildJvm.deleteRecursively(dir);
    }
  }

  static void describe(PrintWriter out, TensorParallelExport.Built b, String what)
      throws java.io.IOException {
    out.printf(
        Locale.ROOT,
        "built %s (%s): %d kernels, %d rank%s x %d time copies of %s, %.1f MB%n",
        b.file().getFileName(),
        what,
        b.kernels(),
        b.ranks(),
        b.ranks() == 1 ? "" : "s",
        b.copies(),
        "the capture",
        Files.size(b.file()) / 1e6);
    out.flush();
  }

  private record Measured(ImportReport report, double seconds, double cpuSeconds) {}

  private static Measured importOnce(Path export) throws java.io.IOException {
    long c0 = ImportBenchmark.cpuNanos();
    long t0 = System.nanoTime();
    long[] spans = new long[1];
    ImportReport report =
        GpuImporter.importFile(
            export,
            ExportFormat.NSYS_SQLITE,
            ImportOptions.defaults(),
            batch -> spans[0] += batch.spanCount() + batch.byteSize());
    double seconds = (System.nanoTime() - t0) / 1e9;
    if (spans[0] == 42) {
      System.out.println(); // keeps the encoding from being optimized away
    }
    return new Measured(report, seconds, (ImportBenchmark.cpuNanos() - c0) / 1e9);
  }
}
