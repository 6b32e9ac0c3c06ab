package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.gpu.CollectiveSummary;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.GpuSummaries;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TP-8 export built from the real TP=2 capture: the truth is SQL over the built file (each
 * rank's collective kernels joined to its NVTX step through the launching runtime call, on
 * (process, correlation id)), against what gpu-summary's machinery and the importer make of it.
 */
class TensorParallelExportTest {
  @TempDir Path dir;

  static final Path CAPTURE = dev.llmlat.sharedtraces.SharedTraces.resolve("h200x2-tp/tp.sqlite");

  static final String TEXT = "COALESCE(text, (SELECT value FROM StringIds s WHERE s.id = textId))";

  /**
   * Per (step text, occurrence on its rank), per device: the all-reduce kernels launched inside it.
   */
  static final String STEP_COLLECTIVES =
      """
      WITH ranges AS (
        SELECT n.globalTid AS tid, n.start AS rs, n."end" AS re,
               COALESCE(n.text, (SELECT value FROM StringIds s WHERE s.id = n.textId)) AS text
        FROM NVTX_EVENTS n WHERE n.eventType IN (59, 60) AND n."end" IS NOT NULL),
      steps AS (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY tid, text ORDER BY rs) - 1 AS occ FROM ranges
        WHERE text LIKE 'prefill %' OR text LIKE 'decode %'),
      launched AS (
        SELECT c.globalTid AS tid, c.start AS cs, k.deviceId AS device
        FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName
        JOIN CUPTI_ACTIVITY_KIND_RUNTIME c ON c.correlationId = k.correlationId
          AND k.globalPid = (c.globalTid / 16777216) * 16777216
        WHERE n.value LIKE 'ncclDevKernel_AllReduce%')
      SELECT s.text, s.occ, l.device, count(*)
      FROM launched l JOIN steps s ON s.tid = l.tid AND l.cs >= s.rs AND l.cs <= s.re
      GROUP BY 1, 2, 3""";

  @Test
  void eightRanksWhoseStepsCollectivesAllMatch() throws Exception {
    Path tp8 = dir.resolve("tp8.sqlite");
    TensorParallelExport.Built built = TensorParallelExport.build(CAPTURE, tp8, 8, 2, 0);

    Map<String, Map<Long, Long>> truth =
        new TreeMap<>(); // "text\0occurrence" -> device -> all-reduces
    Map<Long, Long> collectivesPerDevice = new HashMap<>();
    long kernels;
    long distinctPrefills;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + tp8)) {
      c.createStatement()
          .execute(
              "CREATE INDEX runtime_correlation ON CUPTI_ACTIVITY_KIND_RUNTIME (correlationId)");
      try (ResultSet rs = c.createStatement().executeQuery(STEP_COLLECTIVES)) {
        while (rs.next()) {
          truth
              .computeIfAbsent(rs.getString(1) + "\0" + rs.getLong(2), k -> new TreeMap<>())
              .put(rs.getLong(3), rs.getLong(4));
        }
      }
      try (ResultSet rs =
          c.createStatement()
              .executeQuery(
                  "SELECT deviceId, count(*), count(DISTINCT globalPid)"
                      + " FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName"
                      + " WHERE n.value LIKE 'ncclDevKernel_AllReduce%' GROUP BY deviceId")) {
        while (rs.next()) {
          assertThat(rs.getLong(3)).as("processes on device %d", rs.getLong(1)).isEqualTo(1);
          collectivesPerDevice.put(rs.getLong(1), rs.getLong(2));
        }
      }
      kernels = count(c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
      distinctPrefills =
          count(
              c,
              "SELECT count(DISTINCT t) FROM (SELECT "
                  + TEXT
                  + " AS t FROM NVTX_EVENTS) WHERE t LIKE 'prefill %'");
    }
    long sourceKernels;
    long sourcePrefills;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + CAPTURE)) {
      sourceKernels =
          count(c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0");
      sourcePrefills =
          count(
              c,
              "SELECT count(DISTINCT t) FROM (SELECT "
                  + TEXT
                  + " AS t FROM NVTX_EVENTS) WHERE t LIKE 'prefill %'");
    }
    assertThat(kernels).isEqualTo(built.kernels()).isEqualTo(8 * 2 * sourceKernels);
    assertThat(distinctPrefills)
        .as("each time copy serves requests of its own")
        .isEqualTo(2 * sourcePrefills);
    assertThat(collectivesPerDevice.keySet())
        .containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
    assertThat(truth).isNotEmpty();
    truth.forEach(
        (step, byDevice) -> {
          assertThat(byDevice.keySet()).as("ranks of step %s", step).hasSize(8);
          assertThat(byDevice.values().stream().distinct())
              .as("all-reduces per rank in step %s", step)
              .hasSize(1);
        });

    CollectiveSummary summary = GpuSummaries.of(List.of(tp8)).collectives();
    assertThat(summary.ranks())
        .extracting(CollectiveSummary.RankCollectives::device)
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
    assertThat(summary.ranks().stream().map(CollectiveSummary.RankCollectives::pid).distinct())
        .hasSize(8);
    for (CollectiveSummary.RankCollectives r : summary.ranks()) {
      assertThat(r.collectives())
          .as("device %d", r.device())
          .isEqualTo(collectivesPerDevice.get(r.device()));
      assertThat(r.matched()).as("device %d", r.device()).isEqualTo(r.collectives());
    }
    // the latest rank aside, every rank waits: the copies of one source rank run a little apart
    assertThat(summary.ranks().stream().filter(r -> r.waitNs() > 0)).hasSizeGreaterThanOrEqualTo(7);
    Map<String, Integer> summarized = new HashMap<>();
    for (CollectiveSummary.StepStraggler s : summary.steps()) {
      if (s.name() != null) {
        summarized.put(s.name() + "\0" + s.occurrence(), s.collectives());
      }
    }
    Map<String, Integer> expected = new HashMap<>();
    truth.forEach(
        (step, byDevice) -> expected.put(step, byDevice.values().iterator().next().intValue()));
    assertThat(summarized).isEqualTo(expected);

    ImportReport report =
        GpuImporter.importFile(
            tp8, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), batch -> {});
    assertThat(report.kernels()).isEqualTo(kernels);
    assertThat(report.stepsMatched())
        .isEqualTo(
            count(
                tp8,
                "SELECT count(*) FROM (SELECT "
                    + TEXT
                    + " AS t FROM NVTX_EVENTS"
                    + " WHERE eventType IN (59, 60) AND \"end\" IS NOT NULL) WHERE t LIKE 'prefill %' OR t LIKE 'decode %'"));
  }

  @Test
  void theSingleGpuPathIsRankZeroAloneWithAsManyKernels() throws Exception {
    Path single = dir.resolve("single.sqlite");
    TensorParallelExport.Built built = TensorParallelExport.build(CAPTURE, single, 1, 8, 0);
    long rank0;
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + CAPTURE)) {
      rank0 = count(c, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE deviceId = 0");
    }
    assertThat(built.kernels())
        .isEqualTo(8 * rank0)
        .isEqualTo(count(single, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    assertThat(
            count(
                single,
                "SELECT count(DISTINCT deviceId || '/' || globalPid) FROM CUPTI_ACTIVITY_KIND_KERNEL"))
        .isEqualTo(1);
    assertThat(GpuSummaries.of(List.of(single)).collectives())
        .as("one rank: nothing to match")
        .isNull();
    ImportReport report =
        GpuImporter.importFile(
            single, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), batch -> {});
    assertThat(report.kernels()).isEqualTo(built.kernels());
  }

  private static long count(Path db, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db)) {
      return count(c, sql);
    }
  }

  private static long count(Connection c, String sql) throws SQLException {
    try (ResultSet rs = c.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
