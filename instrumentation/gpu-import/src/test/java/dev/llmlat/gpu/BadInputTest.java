package dev.llmlat.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BadInputTest {
  @TempDir Path dir;

  private void assertRejected(Path file, ExportFormat format, String problem) {
    List<Object> emitted = new ArrayList<>();
    assertThatThrownBy(
            () -> GpuImporter.importFile(file, format, ImportOptions.defaults(), emitted::add))
        .isInstanceOf(InvalidExportException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining(problem);
    assertThat(emitted).isEmpty();
    assertThatThrownBy(() -> GpuSummary.of(file, format, ImportProgress.NONE))
        .isInstanceOf(InvalidExportException.class)
        .hasMessageContaining(file.toString());
  }

  @Test
  void corruptSqlite() throws Exception {
    Path file = dir.resolve("corrupt.sqlite");
    byte[] bytes = new byte[8192];
    System.arraycopy("SQLite format 3\0".getBytes(), 0, bytes, 0, 16);
    Arrays.fill(bytes, 16, bytes.length, (byte) 0x5a);
    Files.write(file, bytes);
    assertRejected(file, ExportFormat.NSYS_SQLITE, "sqlite");
  }

  @Test
  void textFileAsSqlite() throws Exception {
    Path file = dir.resolve("notes.sqlite");
    Files.writeString(
        file, "this is not a database at all, just some text that is long enough\n".repeat(100));
    assertRejected(file, ExportFormat.NSYS_SQLITE, "sqlite");
  }

  @Test
  void nonNsightSqlite() throws Exception {
    Path file = dir.resolve("other.sqlite");
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
        Statement st = c.createStatement()) {
      st.execute("CREATE TABLE people (name TEXT)");
      st.execute("INSERT INTO people VALUES ('ada')");
    }
    assertRejected(file, ExportFormat.NSYS_SQLITE, "not an Nsight Systems export");
    assertThat(ExportFormat.detect(file)).isEqualTo(ExportFormat.NSYS_SQLITE);
  }

  @Test
  void truncatedGzip() throws Exception {
    Path full = ImportFixtures.file("public/kineto__tracelens_hf_qwen1.5-0.5b-chat_h100.json.gz");
    byte[] bytes = Files.readAllBytes(full);
    Path file = dir.resolve("truncated.json.gz");
    Files.write(file, Arrays.copyOf(bytes, bytes.length / 2));
    assertRejected(file, ExportFormat.KINETO_JSON, "truncated");
  }

  @Test
  void jsonOfTheWrongShape() throws Exception {
    Path file = dir.resolve("wrong.json");
    Files.writeString(file, "{\"hello\": [1, 2, 3]}");
    assertRejected(file, ExportFormat.KINETO_JSON, "no traceEvents");
    Path notOtlp = dir.resolve("wrong.otlp.json");
    Files.writeString(notOtlp, "{\"resourceSpans\": 5}\n");
    assertRejected(notOtlp, ExportFormat.OTLP_JSON, "resourceSpans");
    Path badLine = dir.resolve("bad.jsonl");
    Files.writeString(
        badLine,
        "{\"kind\":\"prefill\",\"trace_ids\":[\"0123456789abcdef0123456789abcdef\"],"
            + "\"host_submit_unix_ns\":1,\"gpu_elapsed_ms\":1.5}\n{\"kind\":\"decode\"}\n");
    assertRejected(badLine, ExportFormat.CUDA_EVENT_JSONL, "line 2");
  }

  @Test
  void emptyFile() throws Exception {
    Path file = dir.resolve("empty.json");
    Files.createFile(file);
    for (ExportFormat f : ExportFormat.values()) {
      assertRejected(file, f, "empty");
    }
    assertThatThrownBy(() -> ExportFormat.detect(file))
        .isInstanceOf(InvalidExportException.class)
        .hasMessageContaining("empty");
  }

  @Test
  void pathsThatAreNoReadableFileSayWhat() throws Exception {
    for (ExportFormat f : ExportFormat.values()) {
      assertRejected(dir.resolve("absent.json"), f, "no such file");
      assertRejected(dir.resolve("no-dir").resolve("absent.json"), f, "no such file (directory ");
      assertRejected(dir, f, "is a directory, not an export file");
    }
    assertThatThrownBy(() -> ExportFormat.detect(dir)).hasMessageContaining("is a directory");
    Path fifo = dir.resolve("pipe.json");
    Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
    org.assertj.core.api.Assumptions.assumeThat(p.waitFor()).as("mkfifo works here").isZero();
    for (ExportFormat f : ExportFormat.values()) {
      assertRejected(fifo, f, "is a FIFO (named pipe), not a regular file");
    }
  }

  @Test
  void anUnreadableFileSaysPermissionDenied() throws Exception {
    Path locked = Files.writeString(dir.resolve("locked.json"), "{\"traceEvents\":[]}");
    Files.setPosixFilePermissions(
        locked, java.nio.file.attribute.PosixFilePermissions.fromString("---------"));
    org.assertj.core.api.Assumptions.assumeThat(Files.isReadable(locked))
        .as("not root, whom modes do not stop")
        .isFalse();
    assertRejected(locked, ExportFormat.KINETO_JSON, "permission denied");
  }

  /**
   * Every shared file either reads with the reader its content calls for, or is refused in words.
   */
  @Test
  void everySharedFileIsReadOrRefused() throws Exception {
    List<Path> files;
    try (Stream<Path> s =
        Stream.concat(
            Files.list(ImportFixtures.file("public")),
            Files.walk(ImportFixtures.file("h200-tinylm")))) {
      files =
          s.filter(Files::isRegularFile)
              .filter(p -> !p.toString().endsWith(".txt") && !p.toString().endsWith(".md"))
              .sorted()
              .toList();
    }
    int read = 0;
    for (Path f : files) {
      String n = f.getFileName().toString();
      boolean export =
          n.endsWith(".sqlite")
              || n.startsWith("kineto")
              || n.startsWith("otlp")
              || n.equals("cuda_events.jsonl");
      if (export) {
        ImportReport r = GpuImporter.importFile(f, ImportOptions.defaults(), b -> {});
        assertThat(r.spans()).as(n).isPositive();
        GpuSummary.of(f);
        read++;
      } else {
        assertThatThrownBy(() -> GpuImporter.importFile(f, ImportOptions.defaults(), b -> {}))
            .as(n)
            .isInstanceOf(InvalidExportException.class)
            .hasMessageContaining(n);
      }
    }
    assertThat(read)
        .isEqualTo(
            5 + 15 + 1 + 1 + 1
                + 4); // public nsys, kineto (HTA multi-rank ones among them), otlp; H200 nsys,
    // kineto, cudaEvent logs
  }
}
