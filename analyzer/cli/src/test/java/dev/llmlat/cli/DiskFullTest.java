package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.llmlat.testing.Await;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `llmlat demo` on a full disk, as a user runs it (a child JVM, its Kafka clients logging to its
 * standard error), with a small tmpfs as $LLMLAT_HOME: it says "no space left on device" naming the
 * directory, the Kafka clients' warnings summarized, and exits non-zero. What shows that it noticed
 * the disk (rather than its writers timing out) is the message naming it; the waits only guard
 * against a hang.
 */
class DiskFullTest {
  private static final int HANG_GUARD_S = 300;
  @TempDir Path dir;
  private Path mounted;

  /**
   * A tmpfs of {@code mib} MiB at {@code at}, unmounted after the test; skips where mounting is not
   * allowed.
   */
  private Path tmpfs(Path at, int mib) throws IOException, InterruptedException {
    Files.createDirectories(at);
    Process mount =
        new ProcessBuilder(
                "mount", "-t", "tmpfs", "-o", "size=" + mib + "m", "tmpfs", at.toString())
            .redirectErrorStream(true)
            .start();
    String said = new String(mount.getInputStream().readAllBytes());
    assumeTrue(
        mount.waitFor() == 0,
        "mounting a tmpfs is not permitted here (the test needs root): " + said.strip());
    mounted = at;
    return at;
  }

  @AfterEach
  void unmount() throws IOException, InterruptedException {
    if (mounted != null) {
      new ProcessBuilder("umount", "-l", mounted.toString())
          .inheritIO()
          .start()
          .waitFor(30, TimeUnit.SECONDS);
    }
  }

  private Process demo(Path home, String... args) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx1g",
                "-Dllmlat.agent.dir=" + System.getProperty("llmlat.agent.dir"),
                "-cp",
                System.getProperty("java.class.path"),
                "dev.llmlat.cli.Llmlat",
                "demo"));
    command.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("out.log").toFile()); // off the full disk
    pb.environment().put("LLMLAT_HOME", home.toString());
    pb.environment().remove("LLMLAT_DATA_DIR");
    pb.environment().remove("LLMLAT_KAFKA");
    pb.environment().remove("LLMLAT_CLICKHOUSE_URL");
    return pb.start();
  }

  private String log() throws IOException {
    return Files.readString(dir.resolve("out.log"));
  }

  /** The Kafka clients' own warning lines in the output. */
  private static long kafkaWarnings(String log) {
    return log.lines().filter(l -> l.contains(" WARN ") && l.contains("clientId=")).count();
  }

  @Test
  void theDemoRefusesToStartWhereTooLittleIsFree() throws Exception {
    Path home = tmpfs(dir.resolve("home"), 64);
    Process p = demo(home, "--synthetic", "--requests", "3");
    assertThat(p.waitFor(HANG_GUARD_S, TimeUnit.SECONDS))
        .as("ended within %d s", HANG_GUARD_S)
        .isTrue();
    String log = log();
    assertThat(p.exitValue()).as(log).isEqualTo(1);
    assertThat(log)
        .contains("llmlat demo: no space left on device under " + home + ": ")
        .contains(" bytes) free, the demo needs at least 256.0 MiB")
        .doesNotContain("starting a Kafka broker");
  }

  @Test
  void theDemoStopsWithinSecondsWhenTheDiskFillsWhileItRuns() throws Exception {
    Path home = tmpfs(dir.resolve("home"), 320);
    Process p = demo(home, "--requests", "16", "--rate", "2", "--time-scale", "0.1");
    try {
      Await.logged(
          p, dir.resolve("out.log"), Pattern.compile("\nkafka: 127\\.0\\.0\\.1:"), HANG_GUARD_S);
      fill(home.resolve("filler"));
      long filled = System.nanoTime();
      assertThat(p.waitFor(HANG_GUARD_S, TimeUnit.SECONDS))
          .as("ended within %d s of the disk filling: %s", HANG_GUARD_S, log())
          .isTrue();
      String log = log();
      assertThat(p.exitValue()).as(log).isNotZero();
      assertThat(log).contains("llmlat demo: no space left on device under " + home);
      assertThat(kafkaWarnings(log)).as("Kafka client warnings in: %s", log).isLessThanOrEqualTo(6);
      // the broker started for the run and its scratch log are gone, full disk or not
      assertThat(home.resolve("tmp")).isEmptyDirectory();
      System.out.printf(
          "the demo said the disk was full %d ms after it filled%n",
          (System.nanoTime() - filled) / 1_000_000);
    } finally {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void theIngesterRefusesToStartOnAStoreDiskWithTooLittleFree() throws Exception {
    Path data = tmpfs(dir.resolve("data"), 8);
    LlmlatCliTest.Run r =
        LlmlatCliTest.run("ingest", "--kafka", "127.0.0.1:1", "--data-dir", data.toString());
    assertThat(r.exit()).as(r.err()).isEqualTo(1);
    assertThat(r.err())
        .startsWith("llmlat ingest: no space left on device under " + data + ": ")
        .contains("free, the ingester needs at least 16.0 MiB");
  }

  /** Writes zeros to {@code file} until the file system refuses (ENOSPC). */
  private static void fill(Path file) throws IOException {
    ByteBuffer zeros = ByteBuffer.allocate(1 << 20);
    try (FileChannel out =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      while (true) {
        zeros.clear();
        out.write(zeros);
      }
    } catch (IOException full) {
      if (!String.valueOf(full.getMessage()).contains("No space left on device")) {
        throw full;
      }
    }
  }
}
