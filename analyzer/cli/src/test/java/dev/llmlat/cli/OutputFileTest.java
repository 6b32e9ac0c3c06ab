package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Output files the user names ({@code report --html}, {@code export perfetto -o}): each path that
 * cannot be written gets its own message naming it and exit 2, before any work; nothing is left
 * behind, neither a partial file nor the temporary one. These fail before the store is opened, so
 * they run without one.
 */
class OutputFileTest {
  @TempDir Path dir;

  private LlmlatCliTest.Run report(Path html) {
    return LlmlatCliTest.run(
        "report", "--data-dir", dir.resolve("store").toString(), "--html", html.toString());
  }

  private List<String> names(Path d) throws IOException {
    try (Stream<Path> s = Files.list(d)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void writesThroughATemporaryFileAndLeavesOnlyTheFile() throws Exception {
    Path target = dir.resolve("report.html");
    Files.writeString(target, "old");
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r-----"));
    OutputFile f = OutputFile.check("--html", target);
    f.write(out -> out.write("new".getBytes(StandardCharsets.UTF_8)));
    assertThat(target).hasContent("new");
    assertThat(Files.getPosixFilePermissions(target))
        .isEqualTo(PosixFilePermissions.fromString("rw-r-----"));
    assertThat(names(dir)).containsExactly("report.html");
  }

  @Test
  void aFailingWriteLeavesTheOldFileAndNoTemporaryOne() throws Exception {
    Path target = dir.resolve("report.html");
    Files.writeString(target, "old");
    OutputFile f = OutputFile.check("--html", target);
    assertThatThrownBy(
            () ->
                f.write(
                    out -> {
                      out.write("half".getBytes(StandardCharsets.UTF_8));
                      throw new IOException("the store went away");
                    }))
        .isInstanceOf(IOException.class)
        .hasMessage("the store went away");
    assertThat(target).hasContent("old");
    assertThat(names(dir)).containsExactly("report.html");
  }

  @Test
  void theReportPageIsWrittenWhole() throws Exception {
    Path html = dir.resolve("out").resolve("report.html");
    Files.createDirectory(html.getParent());
    LlmlatCliTest.store(dir.resolve("store"));
    LlmlatCliTest.Run r = report(html);
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("wrote " + html);
    assertThat(Files.readString(html)).startsWith("<!DOCTYPE html>").contains("</html>");
    assertThat(names(html.getParent())).containsExactly("report.html");
  }

  @Test
  void aMissingDirectory() throws Exception {
    Path html = dir.resolve("no-such-dir").resolve("report.html");
    LlmlatCliTest.Run r = report(html);
    assertThat(r.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(r.err())
        .contains("--html " + html + ": directory " + html.getParent() + " does not exist")
        .doesNotContain(".tmp")
        .doesNotContain("Exception");
    assertThat(names(dir)).isEmpty(); // the store was not even opened
  }

  @Test
  void aDirectoryAsTarget() throws Exception {
    Path target = Files.createDirectory(dir.resolve("reports"));
    LlmlatCliTest.Run r = report(target);
    assertThat(r.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(r.err()).contains("--html " + target + ": is a directory; name a file in it");
    assertThat(names(dir)).containsExactly("reports"); // no reports.tmp
    assertThat(names(target)).isEmpty();
  }

  @Test
  void aFifo() throws Exception {
    Path fifo = dir.resolve("pipe.html");
    Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assumeThat(p.waitFor()).as("mkfifo works here").isZero();
    LlmlatCliTest.Run r = report(fifo);
    assertThat(r.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(r.err()).contains("--html " + fifo + ": is a FIFO (named pipe), not a regular file");
    assertThat(names(dir)).containsExactly("pipe.html");
    assertThat(Files.isRegularFile(fifo)).isFalse(); // still the FIFO, not replaced
  }

  @Test
  void noPermissionToCreateFilesInTheDirectory() throws Exception {
    Path locked = Files.createDirectory(dir.resolve("locked"));
    try (AutoCloseable unlock = lock(locked)) {
      Path html = locked.resolve("report.html");
      LlmlatCliTest.Run r = report(html);
      assertThat(r.exit()).isEqualTo(Llmlat.EXIT_USAGE);
      assertThat(r.err())
          .contains("--html " + html + ": permission denied: cannot create files in " + locked);
      assertThat(names(locked)).isEmpty();
    }
  }

  @Test
  void noPermissionToReplaceTheFile() throws Exception {
    Path html = Files.writeString(dir.resolve("report.html"), "old");
    try (AutoCloseable unlock = lock(html)) {
      LlmlatCliTest.Run r = report(html);
      assertThat(r.exit()).isEqualTo(Llmlat.EXIT_USAGE);
      assertThat(r.err())
          .contains("--html " + html + ": permission denied: the file is not writable");
    }
    assertThat(html).hasContent("old");
  }

  @Test
  void exportPerfettoChecksItsOutputTheSameWay() throws Exception {
    Path target = Files.createDirectory(dir.resolve("traces"));
    LlmlatCliTest.Run r =
        LlmlatCliTest.run(
            "export",
            "perfetto",
            "--data-dir",
            dir.resolve("store").toString(),
            "--since",
            "5m",
            "-o",
            target.toString());
    assertThat(r.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(r.err()).contains("--output " + target + ": is a directory");
    assertThat(names(dir)).containsExactly("traces");
  }

  /**
   * Makes {@code p} unwritable and gives it back on close: by its mode, or, as root (whom modes do
   * not stop), by the immutable attribute; skips the test where neither works.
   */
  private static AutoCloseable lock(Path p) throws Exception {
    if (!"root".equals(System.getProperty("user.name"))) {
      var before = Files.getPosixFilePermissions(p);
      Files.setPosixFilePermissions(
          p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "r-xr-xr-x" : "r--r--r--"));
      return () -> Files.setPosixFilePermissions(p, before);
    }
    Process chattr =
        new ProcessBuilder("chattr", "+i", p.toString()).redirectErrorStream(true).start();
    assumeThat(chattr.waitFor()).as("chattr +i works here (root ignores file modes)").isZero();
    assumeThat(Files.isWritable(p)).as("the immutable attribute stops writes").isFalse();
    return () -> new ProcessBuilder("chattr", "-i", p.toString()).start().waitFor();
  }
}
