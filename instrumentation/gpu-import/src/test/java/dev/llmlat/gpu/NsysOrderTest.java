package dev.llmlat.gpu;

import static dev.llmlat.gpu.ImportFixtures.attr;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.nvtx.NvtxPattern;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The activity order the Nsight import promises: start order; equal starts kernel, memcpy, memset,
 * each in table order. Tables are read in rowid order and checked as they are read; a table stored
 * out of order is noticed at its first row out of order, after which every activity comes again
 * sorted and those already emitted are only recounted: every activity is emitted exactly once and
 * step figures are what the sorted order gives.
 */
class NsysOrderTest {
  private static final long PID = 7L << 24;

  @TempDir Path dir;

  private Path export(boolean inOrder) throws Exception {
    Path file = dir.resolve(inOrder ? "ordered.sqlite" : "unordered.sqlite");
    java.nio.file.Files.deleteIfExists(file);
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
      st.execute("INSERT INTO StringIds VALUES (1, 'k1'), (2, 'k2'), (3, 'k3'), (4, 'k4')");
      st.execute(
          "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
              + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, shortName INTEGER)");
      String k1 = "(300, 310, 0, 7, 11, " + PID + ", 1)";
      String k2 = "(100, 150, 0, 7, 12, " + PID + ", 2)";
      String k3 = "(200, 260, 0, 7, 13, " + PID + ", 3)";
      String k4 = "(200, 205, 0, 8, 14, NULL, 4)"; // same start as k3, stored after it
      st.execute(
          "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
              + (inOrder ? String.join(", ", k2, k3, k4, k1) : String.join(", ", k1, k2, k3, k4)));
      st.execute(
          "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,"
              + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER)");
      String htoD = "(200, 220, 0, 7, 21, " + PID + ", 64, 1)";
      String dtoH = "(50, 60, 0, 7, 22, " + PID + ", 32, 2)";
      st.execute(
          "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES "
              + (inOrder ? dtoH + ", " + htoD : htoD + ", " + dtoH));
      st.execute(
          "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER,"
              + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER)");
      st.execute(
          "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (200, 201, 0, 7, 31, " + PID + ", 8)");
      st.execute(
          "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
              + " correlationId INTEGER)");
      // Correlation 13: the driver call (thread 2, later) and the runtime call (thread 1, earlier)
      // share the id.
      st.execute(
          "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (95, 99, "
              + (PID + 2)
              + ", 13), (90, 99, "
              + (PID + 1)
              + ", 13), (80, 85, "
              + (PID + 3)
              + ", 12), (10, 20, "
              + ((9L << 24) + 4)
              + ", 11)");
    }
    return file;
  }

  @Test
  void activitiesComeInStartOrderWithTiesByKindThenTableOrder() throws Exception {
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report =
        GpuImporter.importFile(export(true), ImportOptions.defaults().withBatchSize(3), sink);

    assertThat(sink.spans.stream().map(Span::getName).collect(Collectors.toList()))
        .containsExactly("Memcpy DtoH", "k2", "k3", "k4", "Memcpy HtoD", "Memset", "k1");
    assertLaunchesAndCounts(sink.spans, report);
  }

  @Test
  void aTableOutOfOrderIsReadAgainSortedWithoutEmittingAnythingTwice() throws Exception {
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report =
        GpuImporter.importFile(export(false), ImportOptions.defaults().withBatchSize(3), sink);

    // Rowid order meets "Memcpy HtoD" (200) first, then "Memcpy DtoH" (50): out of order. The rest
    // comes sorted; HtoD, already emitted, only recounted.
    assertThat(sink.spans.stream().map(Span::getName).collect(Collectors.toList()))
        .containsExactly("Memcpy HtoD", "Memcpy DtoH", "k2", "k3", "k4", "Memset", "k1");
    assertThat(sink.spans.stream().map(Span::getSpanId).distinct()).hasSize(7);
    assertLaunchesAndCounts(sink.spans, report);
    assertThat(GpuSummary.of(export(false)))
        .usingRecursiveComparison()
        .ignoringFields("file")
        .isEqualTo(GpuSummary.of(export(true)));
  }

  private static void assertLaunchesAndCounts(List<Span> spans, ImportReport report) {
    assertThat(report.kernels()).isEqualTo(4);
    assertThat(report.memcpys()).isEqualTo(2);
    assertThat(report.memsets()).isEqualTo(1);
    assertThat(report.spans()).isEqualTo(7);
    assertThat(report.unattributed())
        .containsExactly(java.util.Map.entry(UnattributedReason.NO_RANGES_IN_EXPORT, 7L));
    // The earliest call of a shared correlation id is the launch; another process's call is not.
    assertThat(attr(named(spans, "k3"), LlmlatAttributes.THREAD_ID)).isEqualTo("1");
    assertThat(attr(named(spans, "k2"), LlmlatAttributes.THREAD_ID)).isEqualTo("3");
    assertThat(attr(named(spans, "k1"), LlmlatAttributes.THREAD_ID)).isNull();
    assertThat(attr(named(spans, "k1"), "process.pid")).isEqualTo("7");
    assertThat(attr(named(spans, "k4"), "process.pid")).isNull(); // no globalPid, no launch
  }

  private static Span named(List<Span> spans, String name) {
    return spans.stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow();
  }

  /**
   * A step's busy time, kernel count and first/last activity, and every kernel span but its id,
   * come out the same whether the kernel table is stored in start order or shuffled.
   */
  @Test
  void stepFiguresDoNotDependOnTheTablesStoredOrder() throws Exception {
    List<String> kernels = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      // Overlapping and gapped kernels on two streams, all launched inside the range.
      long start = 1_000 + i * 70L + (i % 3) * 25;
      kernels.add(
          "("
              + start
              + ", "
              + (start + 60 + (i % 5) * 20)
              + ", 0, "
              + (7 + i % 2)
              + ", "
              + (100 + i)
              + ", "
              + PID
              + ", 1)");
    }
    List<String> shuffled = new ArrayList<>(kernels);
    java.util.Collections.shuffle(shuffled, new java.util.Random(7));
    ImportOptions options =
        ImportOptions.defaults()
            .withPattern(NvtxPattern.regex("step (?<traces>[0-9a-f]{32})"))
            .withBatchSize(16);
    Map<Boolean, ImportFixtures.Collector> sinks = new java.util.HashMap<>();
    for (boolean ordered : new boolean[] {true, false}) {
      // One file name: span ids derive from it.
      Path file =
          java.nio.file.Files.createDirectories(dir.resolve(ordered ? "sorted" : "shuffled"))
              .resolve("steps.sqlite");
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
          Statement st = c.createStatement()) {
        st.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
        st.execute("INSERT INTO StringIds VALUES (1, 'gemm')");
        st.execute(
            "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
                + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, shortName INTEGER)");
        st.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                + String.join(", ", ordered ? kernels : shuffled));
        st.execute(
            "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
                + " correlationId INTEGER)");
        List<String> calls = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
          calls.add("(" + (10 + i) + ", " + (11 + i) + ", " + (PID + 1) + ", " + (100 + i) + ")");
        }
        st.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES " + String.join(", ", calls));
        st.execute(
            "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
                + " globalTid INTEGER)");
        st.execute(
            "INSERT INTO NVTX_EVENTS VALUES (5, 60, 59, 'step "
                + "ab".repeat(16)
                + "', "
                + (PID + 1)
                + ")");
      }
      ImportFixtures.Collector sink = new ImportFixtures.Collector();
      ImportReport report = GpuImporter.importFile(file, options, sink);
      assertThat(report.kernels()).isEqualTo(40);
      assertThat(report.stepsMatched()).isEqualTo(1);
      assertThat(report.unattributed()).isEmpty();
      assertThat(sink.spans).hasSize(41);
      assertThat(sink.spans.stream().map(Span::getSpanId).distinct()).hasSize(41);
      sinks.put(ordered, sink);
    }
    Span sortedStep = named(sinks.get(true).spans, "step");
    Span shuffledStep = named(sinks.get(false).spans, "step");
    assertThat(shuffledStep.getAttributesList()).isEqualTo(sortedStep.getAttributesList());
    assertThat(shuffledStep.getStartTimeUnixNano()).isEqualTo(sortedStep.getStartTimeUnixNano());
    assertThat(shuffledStep.getEndTimeUnixNano()).isEqualTo(sortedStep.getEndTimeUnixNano());
    long[][] intervals =
        kernels.stream()
            .map(k -> k.substring(1).split(", "))
            .map(f -> new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])})
            .toArray(long[][]::new);
    assertThat(attr(sortedStep, LlmlatAttributes.GPU_BUSY_NS))
        .isEqualTo(String.valueOf(ImportFixtures.union(List.of(intervals))));
    assertThat(withoutIds(sinks.get(false).spans))
        .containsExactlyInAnyOrderElementsOf(withoutIds(sinks.get(true).spans));
  }

  private static List<Span> withoutIds(List<Span> spans) {
    return spans.stream()
        .map(s -> s.toBuilder().clearSpanId().build())
        .collect(Collectors.toList());
  }

  @Test
  void aFailingSinkStopsTheImportAndItsReader() throws Exception {
    Path file = export(true);
    RuntimeException boom = new IllegalStateException("sink down");
    assertThatThrownBy(
            () ->
                GpuImporter.importFile(
                    file,
                    ImportOptions.defaults().withBatchSize(1),
                    b -> {
                      throw boom;
                    }))
        .isSameAs(boom);
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.getName().equals("llmlat-nsys-reader"));
  }
}
