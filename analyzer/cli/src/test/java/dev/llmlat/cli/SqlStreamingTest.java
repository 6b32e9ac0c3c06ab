package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code llmlat sql} streams its result: the real CLI in a child JVM whose heap could not hold the
 * result (6M rows, 2.5 GB as whole rows before) prints every row, from the embedded engine and from
 * a server through the driver; a reader that goes away ({@code | head}) ends it quietly.
 */
class SqlStreamingTest {
  static final String SIX_MILLION = "SELECT number, toString(number) FROM numbers(6000000)";

  @TempDir Path dir;

  /** What a child's stdout held: its line count and last line, read without keeping the lines. */
  record Output(long lines, String first, String last) {}

  private ProcessBuilder cli(List<String> args) {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-Xmx64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                "dev.llmlat.cli.Llmlat"));
    cmd.addAll(args);
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .directory(dir.toFile())
            .redirectError(dir.resolve("err.log").toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    pb.environment().put("LLMLAT_HOME", dir.resolve("home").toString());
    pb.environment().remove("LLMLAT_CLICKHOUSE_URL");
    return pb;
  }

  private static Output consume(InputStream stdout) throws IOException {
    long lines = 0;
    String first = null;
    String last = null;
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(stdout, StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; lines++) {
        if (first == null) {
          first = line;
        }
        last = line;
      }
    }
    return new Output(lines, first, last);
  }

  private Output runToEnd(List<String> args) throws Exception {
    Process p = cli(args).start();
    Output out = consume(p.getInputStream());
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(Files.readString(dir.resolve("err.log"))).isZero();
    return out;
  }

  @Test
  void sixMillionRowsFromTheEmbeddedStoreStreamThroughASixtyFourMegabyteHeap() throws Exception {
    LlmlatCliTest.store(dir.resolve("data"));
    Output out =
        runToEnd(
            List.of(
                "sql",
                SIX_MILLION,
                "--format",
                "tsv",
                "--data-dir",
                dir.resolve("data").toString()));
    assertThat(out)
        .isEqualTo(new Output(6_000_001, "number\ttoString(number)", "5999999\t5999999"));
    assertThat(Files.readString(dir.resolve("err.log"))).doesNotContain("OutOfMemoryError");
  }

  /** The same through a server (the store's HTTP interface here) and the official driver. */
  @Test
  void sixMillionRowsFromAServerStreamThroughASixtyFourMegabyteHeap() throws Exception {
    try (EmbeddedClickHouse store =
            EmbeddedClickHouse.openConfined(
                dir.resolve("data"), EngineLibrary.locate(), Confinement.STRICT);
        ClickHouseHttpServer http = ClickHouseHttpServer.start(store, 0)) {
      Output out =
          runToEnd(
              List.of(
                  "sql",
                  SIX_MILLION,
                  "--format",
                  "json",
                  "--clickhouse-url",
                  http.url(),
                  "--clickhouse-user",
                  "default"));
      assertThat(out.lines())
          .isEqualTo(
              1 + 3 * 6_000_000L); // "[ {", then each row: its two fields and "}, {" (the last "}
      // ]")
      assertThat(out.last()).isEqualTo("} ]");
    }
  }

  /**
   * {@code llmlat sql ... | head -3}: the reader closes the pipe; the command stops its query and
   * ends without a word.
   */
  @Test
  void aReaderThatGoesAwayEndsTheCommandQuietly() throws Exception {
    LlmlatCliTest.store(dir.resolve("data"));
    Process p =
        cli(List.of(
                "sql",
                "SELECT number FROM numbers(1000000000000)",
                "--format",
                "tsv",
                "--data-dir",
                dir.resolve("data").toString()))
            .start();
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      assertThat(r.readLine()).isEqualTo("number");
      assertThat(r.readLine()).isEqualTo("0");
    }
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("ended once its reader went away").isTrue();
    assertThat(p.exitValue()).isEqualTo(SqlCommand.EXIT_OUTPUT_CLOSED);
    assertThat(Files.readString(dir.resolve("err.log"))).isEmpty();
  }
}
