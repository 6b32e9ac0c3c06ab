package dev.llmlat.gpu;

import static dev.llmlat.gpu.SharedTraces.attr;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The activity order the Nsight import promises, now that the tables are merged in Java rather than
 * sorted by sqlite: start order; equal starts kernel, memcpy, memset, each in table order; a table
 * stored out of order (or with rowid gaps) is sorted. Span ids follow this order.
 */
class NsysOrderTest {
  private static final long PID = 7L << 24;

  @TempDir
  Path dir;

  private Path export(boolean kernelsInOrder) throws Exception {
    Path file = dir.resolve(kernelsInOrder ? "ordered.sqlite" : "unordered.sqlite");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
      st.execute("INSERT INTO StringIds VALUES (1, 'k1'), (2, 'k2'), (3, 'k3'), (4, 'k4')");
      st.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
          + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, shortName INTEGER)");
      String k1 = "(300, 310, 0, 7, 11, " + PID + ", 1)";
      String k2 = "(100, 150, 0, 7, 12, " + PID + ", 2)";
      String k3 = "(200, 260, 0, 7, 13, " + PID + ", 3)";
      String k4 = "(200, 205, 0, 8, 14, NULL, 4)"; // same start as k3, stored after it
      st.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES " + (kernelsInOrder
          ? String.join(", ", k2, k3, k4, k1) : String.join(", ", k1, k2, k3, k4)));
      st.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,"
          + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER)");
      st.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (200, 220, 0, 7, 21, " + PID + ", 64, 1),"
          + " (50, 60, 0, 7, 22, " + PID + ", 32, 2)");
      st.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER,"
          + " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER)");
      st.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (200, 201, 0, 7, 31, " + PID + ", 8)");
      st.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,"
          + " correlationId INTEGER)");
      // Correlation 13: the driver call (thread 2, later) and the runtime call (thread 1, earlier) share the id.
      st.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (95, 99, " + (PID + 2) + ", 13), (90, 99, "
          + (PID + 1) + ", 13), (80, 85, " + (PID + 3) + ", 12), (10, 20, " + ((9L << 24) + 4) + ", 11)");
    }
    return file;
  }

  @Test
  void activitiesComeInStartOrderWithTiesByKindThenTableOrder() throws Exception {
    for (boolean ordered : new boolean[] {true, false}) {
      SharedTraces.Collector sink = new SharedTraces.Collector();
      ImportReport report = GpuImporter.importFile(export(ordered), ImportOptions.defaults().withBatchSize(3), sink);

      assertThat(sink.spans.stream().map(Span::getName).collect(Collectors.toList())).as("ordered=%s", ordered)
          .containsExactly("Memcpy DtoH", "k2", "k3", "k4", "Memcpy HtoD", "Memset", "k1");
      assertThat(report.unattributed()).containsExactly(
          java.util.Map.entry(UnattributedReason.NO_RANGES_IN_EXPORT, 7L));
      List<Span> spans = sink.spans;
      // The earliest call of a shared correlation id is the launch; another process's call is not.
      assertThat(attr(spans.get(2), LlmlatAttributes.THREAD_ID)).isEqualTo("1");
      assertThat(attr(spans.get(1), LlmlatAttributes.THREAD_ID)).isEqualTo("3");
      assertThat(attr(spans.get(6), LlmlatAttributes.THREAD_ID)).isNull();
      assertThat(attr(spans.get(6), "process.pid")).isEqualTo("7");
      assertThat(attr(spans.get(3), "process.pid")).isNull(); // no globalPid, no launch
    }
  }

  @Test
  void aFailingSinkStopsTheImportAndItsReader() throws Exception {
    Path file = export(true);
    RuntimeException boom = new IllegalStateException("sink down");
    assertThatThrownBy(() -> GpuImporter.importFile(file, ImportOptions.defaults().withBatchSize(1), b -> {
      throw boom;
    })).isSameAs(boom);
    assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("llmlat-nsys-reader"));
  }
}
