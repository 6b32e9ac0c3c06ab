package dev.llmlat.bench;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.stats.Bootstrap;
import dev.llmlat.stats.Quantiles;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Locale;
import org.sqlite.SQLiteConfig;

/**
 * Measures the Nsight importer against a raw scan of the same kernel table. Builds a large export
 * by replicating the kernel (and runtime, NVTX) rows of a real one into a temporary sqlite, shifted
 * in time and correlation id per copy, then times {@code SELECT start, end, deviceId, streamId,
 * correlationId, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL} read through sqlite-jdbc and a full
 * import into a sink that counts the spans and bytes of the encoded per-trace records (what the
 * Kafka sink sends as they are), in the same JVM.
 *
 * <p>Two raw baselines: sqlite-jdbc's defaults (what a plain {@code SELECT} gets), and the
 * connection settings the importer itself uses ({@link dev.llmlat.gpu.NsysConnections#config}:
 * read-only, sqlite's multi-thread mode), which read faster. Each import is bracketed by raw scans:
 * its baseline is the mean time of the scans just before and just after it (raw, import, raw,
 * import, ...), since this VM's speed drifts over seconds (the same scan takes 0.18 s in some
 * stretches and 0.35 s in others). Each round also prints the process CPU time of either side (all
 * threads, GC and JIT included), the import's GC pauses and the JIT compiler's time in the round:
 * C2 keeps compiling the import's code for a dozen rounds of an export this size, on the same two
 * cores. The first {@code warmup} rounds are printed but left out of the medians; the last line is
 * the one to quote:
 *
 * <pre>
 * median of rounds 11-30: raw scan 1234567 kernels/s (importer's settings 1434567); import 654321 kernels/s; ratio 53% (bootstrap 95% interval 48%-57%), against the importer's settings 46% (42%-50%); import CPU time 3.1x the raw scan's
 * </pre>
 *
 * <p>Usage: {@code ImportBenchmark <export.sqlite> [copies=100] [rounds=5] [warmup=1]}
 */
public final class ImportBenchmark {
  private ImportBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path source =
        Paths.get(args.length > 0 ? args[0] : "../shared/traces/h200-tinylm/nsys/nsys_b.sqlite");
    int copies = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    Path big = Files.createTempFile("llmlat-bench-", ".sqlite");
    Files.delete(big);
    try {
      long kernels = build(source, big, copies);
      System.out.printf(
          Locale.ROOT,
          "built %s: %d kernels (%d copies of %s), %.1f MB%n",
          big,
          kernels,
          copies,
          source.getFileName(),
          Files.size(big) / 1e6);
      int rounds = args.length > 2 ? Math.max(1, Integer.parseInt(args[2])) : 5;
      int warmup = args.length > 3 ? Math.max(0, Integer.parseInt(args[3])) : 1;
      double[] raw = new double[rounds];
      double[] rawTuned = new double[rounds];
      double[] imported = new double[rounds];
      double[] ratio = new double[rounds];
      double[] ratioTuned = new double[rounds];
      double[] cpuRatio = new double[rounds];
      CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
      RawScans before = RawScans.measure(big, kernels, false);
      for (int round = 1; round <= warmup + rounds; round++) {
        long jit0 = jit.getTotalCompilationTime();
        long[] spans = new long[2];
        long gc0 = gcMillis();
        long c0 = cpuNanos();
        long t0 = System.nanoTime();
        ImportReport report =
            GpuImporter.importFile(
                big,
                ExportFormat.NSYS_SQLITE,
                ImportOptions.defaults(),
                batch -> {
                  spans[0] += batch.spanCount();
                  spans[1] += batch.byteSize();
                });
        double importSeconds = (System.nanoTime() - t0) / 1e9;
        double importCpu = (cpuNanos() - c0) / 1e9;
        long importGc = gcMillis() - gc0;
        long jitMillis = jit.getTotalCompilationTime() - jit0;
        RawScans after = RawScans.measure(big, kernels, round % 2 == 1);
        // The baseline around this import: the mean time of the scans just before and just after
        // it.
        double rawSeconds = (before.seconds + after.seconds) / 2;
        double tunedSeconds = (before.tunedSeconds + after.tunedSeconds) / 2;
        double rawCpu = (before.cpu + after.cpu) / 2;
        before = after;
        double rawRate = kernels / rawSeconds;
        double tunedRate = kernels / tunedSeconds;
        double importRate = report.kernels() / importSeconds;
        System.out.printf(
            Locale.ROOT,
            "%s %d: raw scan %d kernels in %.2f s = %.0f kernels/s (importer's settings"
                + " %.2f s = %.0f kernels/s); import %d kernels (%d spans, %d steps, %.1f MB of OTLP records) in %.2f s"
                + " = %.0f kernels/s; ratio %.0f%% (%.0f%%); CPU: raw scan %.2f s, import %.2f s (GC pauses %d ms,"
                + " JIT %d ms)%n",
            round <= warmup ? "warm-up round" : "round",
            round,
            kernels,
            rawSeconds,
            rawRate,
            tunedSeconds,
            tunedRate,
            report.kernels(),
            spans[0],
            report.stepsMatched(),
            spans[1] / 1e6,
            importSeconds,
            importRate,
            100 * importRate / rawRate,
            100 * importRate / tunedRate,
            rawCpu,
            importCpu,
            importGc,
            jitMillis);
        if (round > warmup) {
          int i = round - warmup - 1;
          raw[i] = rawRate;
          rawTuned[i] = tunedRate;
          imported[i] = importRate;
          ratio[i] = importRate / rawRate;
          ratioTuned[i] = importRate / tunedRate;
          cpuRatio[i] = importCpu / rawCpu;
        }
      }
      Bootstrap.Interval interval = Bootstrap.of(ratio, Quantiles::median);
      Bootstrap.Interval intervalTuned = Bootstrap.of(ratioTuned, Quantiles::median);
      System.out.printf(
          Locale.ROOT,
          "median of rounds %d-%d: raw scan %.0f kernels/s (importer's settings %.0f);"
              + " import %.0f kernels/s; ratio %.0f%% (bootstrap 95%% interval %.0f%%-%.0f%%), against the importer's"
              + " settings %.0f%% (%.0f%%-%.0f%%); import CPU time %.1fx the raw scan's%n",
          warmup + 1,
          warmup + rounds,
          Quantiles.median(raw),
          Quantiles.median(rawTuned),
          Quantiles.median(imported),
          100 * Quantiles.median(ratio),
          100 * interval.low(),
          100 * interval.high(),
          100 * Quantiles.median(ratioTuned),
          100 * intervalTuned.low(),
          100 * intervalTuned.high(),
          Quantiles.median(cpuRatio));
    } finally {
      Files.deleteIfExists(big);
    }
  }

  /**
   * One raw scan with sqlite-jdbc's defaults and one with the importer's connection settings, back
   * to back; {@code tunedFirst} alternates so that each kind lies symmetrically around an import
   * (plain, tuned, import, tuned, plain, import, ...).
   */
  private record RawScans(double seconds, double tunedSeconds, double cpu) {
    static RawScans measure(Path db, long kernels, boolean tunedFirst) throws Exception {
      SQLiteConfig tuned = dev.llmlat.gpu.NsysConnections.config();
      double tunedSeconds = 0;
      if (tunedFirst) {
        tunedSeconds = timed(db, tuned, kernels);
      }
      long c0 = cpuNanos();
      double seconds = timed(db, new SQLiteConfig(), kernels);
      double cpu = (cpuNanos() - c0) / 1e9;
      if (!tunedFirst) {
        tunedSeconds = timed(db, tuned, kernels);
      }
      return new RawScans(seconds, tunedSeconds, cpu);
    }

    private static double timed(Path db, SQLiteConfig config, long kernels) throws Exception {
      long t0 = System.nanoTime();
      long scanned = rawScan(db, config);
      double seconds = (System.nanoTime() - t0) / 1e9;
      if (scanned != kernels) {
        throw new IllegalStateException("raw scan read " + scanned + " kernels of " + kernels);
      }
      return seconds;
    }
  }

  /**
   * CPU time of the whole process (all threads, GC included): steadier than wall time on a busy
   * machine.
   */
  static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static long gcMillis() {
    long total = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      total += Math.max(0, gc.getCollectionTime());
    }
    return total;
  }

  private static long rawScan(Path db, SQLiteConfig config) throws Exception {
    long n = 0;
    long sink = 0;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db, config.toProperties());
        Statement st = c.createStatement()) {
      st.setFetchSize(4096);
      try (ResultSet rs =
          st.executeQuery(
              "SELECT start, end, deviceId, streamId, correlationId, shortName FROM CUPTI_ACTIVITY_KIND_KERNEL")) {
        while (rs.next()) {
          sink +=
              rs.getLong(1)
                  + rs.getLong(2)
                  + rs.getLong(3)
                  + rs.getLong(4)
                  + rs.getLong(5)
                  + rs.getLong(6);
          n++;
        }
      }
    }
    if (sink == 42) {
      System.out.println(); // keeps the reads from being optimized away
    }
    return n;
  }

  /**
   * Copies the source's tables, then appends {@code copies - 1} shifted copies of the activity
   * rows.
   */
  private static long build(Path source, Path target, int copies) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + target);
        Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode=OFF");
      st.execute("PRAGMA synchronous=OFF");
      st.execute("ATTACH DATABASE '" + source.toAbsolutePath() + "' AS src");
      for (String t :
          new String[] {
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            "CUPTI_ACTIVITY_KIND_MEMSET",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "NVTX_EVENTS",
            "StringIds",
            "TARGET_INFO_SESSION_START_TIME"
          }) {
        st.execute("CREATE TABLE main." + t + " AS SELECT * FROM src." + t);
      }
      long span;
      long corr;
      try (ResultSet rs =
          st.executeQuery(
              "SELECT max(end) - min(start) + 1000000 FROM src.CUPTI_ACTIVITY_KIND_RUNTIME")) {
        span = rs.getLong(1);
      }
      try (ResultSet rs =
          st.executeQuery("SELECT max(correlationId) + 1 FROM src.CUPTI_ACTIVITY_KIND_RUNTIME")) {
        corr = rs.getLong(1);
      }
      c.setAutoCommit(false);
      for (int i = 1; i < copies; i++) {
        long dt = span * i;
        long dc = corr * i;
        for (String t :
            new String[] {
              "CUPTI_ACTIVITY_KIND_KERNEL",
              "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET",
              "CUPTI_ACTIVITY_KIND_RUNTIME"
            }) {
          st.execute(shifted(c, t, dt, dc));
        }
        st.execute(shifted(c, "NVTX_EVENTS", dt, 0));
      }
      c.commit();
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")) {
        return rs.getLong(1);
      }
    }
  }

  private static String shifted(Connection c, String table, long dt, long dc) throws Exception {
    StringBuilder cols = new StringBuilder();
    StringBuilder vals = new StringBuilder();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("PRAGMA main.table_info(" + table + ")")) {
      while (rs.next()) {
        String col = rs.getString("name");
        if (cols.length() > 0) {
          cols.append(", ");
          vals.append(", ");
        }
        cols.append('"').append(col).append('"');
        vals.append(
            switch (col) {
              case "start", "end" -> "\"" + col + "\" + " + dt;
              case "correlationId" -> "\"" + col + "\" + " + dc;
              default -> "\"" + col + "\"";
            });
      }
    }
    return "INSERT INTO main." + table + " (" + cols + ") SELECT " + vals + " FROM src." + table;
  }
}
