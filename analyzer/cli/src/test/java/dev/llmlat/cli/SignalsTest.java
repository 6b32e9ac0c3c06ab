package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Ctrl-C and SIGTERM at a random moment of commands that hold the embedded engine, as a user's
 * shell sends them to the real CLI in a child JVM: exit 130 or 143 with one line saying so, no JVM
 * crash file, and an import either whole in the store or absent.
 */
class SignalsTest {
  /** Spans in the generated export: enough that an import lasts well past the latest signal. */
  static final int SPANS = 300_000;

  @TempDir Path dir;

  static Stream<Arguments> cases() {
    // seeded, so a failure names a moment that can be replayed
    Random random = new Random(20261201);
    List<Arguments> out = new ArrayList<>();
    String[][] commands = {
      {"sql", "SELECT sleepEachRow(0.5) FROM numbers(40) SETTINGS max_block_size = 1"},
      {"analyze", "--follow"},
      {"import", "otlp-json", "big.otlp.jsonl", "--to", "store"}
    };
    for (String[] command : commands) {
      for (String signal : List.of("INT", "TERM")) {
        out.add(Arguments.of(List.of(command), signal, 1500 + random.nextInt(2500)));
      }
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0} SIG{1} after {2} ms")
  @MethodSource("cases")
  void aSignalEndsTheCommandCleanly(List<String> command, String signal, int afterMs)
      throws Exception {
    if (command.get(0).equals("import")) {
      writeExport(dir.resolve("big.otlp.jsonl"));
    } else {
      LlmlatCliTest.store(dir.resolve("store")); // sql and analyze read a store, and make none
    }
    Process p = start(command);
    Thread.sleep(afterMs);
    assertThat(p.isAlive())
        .as("still running after %d ms: %s", afterMs, Files.readString(dir.resolve("out.log")))
        .isTrue();
    new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor();
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    String log = Files.readString(dir.resolve("out.log"));
    assertThat(p.exitValue()).as(log).isEqualTo(signal.equals("INT") ? 130 : 143);
    assertThat(log)
        .contains("llmlat " + command.get(0) + ": interrupted by SIG" + signal + "; stopping");
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(f -> f.getFileName().toString())).noneMatch(f -> f.startsWith("hs_err"));
    }
    if (command.get(0).equals("import")) {
      // all of the import or none of it
      assertThat(count("store")).isIn("0", Integer.toString(SPANS));
    }
  }

  /** {@link #SPANS} spans of 1,000 traces as OTLP/JSON lines, 100 spans a line. */
  static void writeExport(Path file) throws IOException {
    StringBuilder out = new StringBuilder();
    long t = 1_795_970_300_000_000_000L;
    for (int line = 0; line < SPANS / 100; line++) {
      out.append(
              "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc\"}}]},")
          .append("\"scopeSpans\":[{\"spans\":[");
      for (int i = 0; i < 100; i++) {
        int n = line * 100 + i;
        out.append(i == 0 ? "" : ",")
            .append(
                String.format(
                    "{\"traceId\":\"%032x\",\"spanId\":\"%016x\",\"name\":\"s\",\"kind\":1,"
                        + "\"startTimeUnixNano\":\"%d\",\"endTimeUnixNano\":\"%d\"}",
                    1 + n / 300, 1 + n, t + n * 1000L, t + n * 1000L + 500));
      }
      out.append("]}]}]}\n");
    }
    Files.writeString(file, out);
  }

  private String count(String store) throws Exception {
    Process count =
        start(List.of("sql", "--format", "tsv", "SELECT count() FROM otel_traces"), store);
    assertThat(count.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String[] lines = Files.readString(dir.resolve("out.log")).strip().split("\n");
    return lines[lines.length - 1];
  }

  private Process start(List<String> args) throws IOException {
    return start(args, "store");
  }

  private Process start(List<String> args, String store) throws IOException {
    List<String> cmd = new ArrayList<>(DefaultSignals.prefix());
    cmd.addAll(
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "--enable-native-access=ALL-UNNAMED",
            "-Xmx384m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            System.getProperty("java.class.path"),
            "dev.llmlat.cli.Llmlat"));
    cmd.addAll(args);
    cmd.add("--data-dir");
    cmd.add(dir.resolve(store).toString());
    return new ProcessBuilder(cmd)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("out.log").toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .start();
  }
}
