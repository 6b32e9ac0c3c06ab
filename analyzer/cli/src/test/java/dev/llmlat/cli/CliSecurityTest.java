package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input through the commands that put user text into SQL, and secrets kept out of {@code
 * --help}, {@code services status} and error messages.
 */
class CliSecurityTest {
  private static final String SECRET = "Pw-4b7d91e2-never-shown";
  private static final String TRACE = "0af7651916cd43dd8448eb211c80319c";

  @TempDir Path dir;

  private static LlmlatCliTest.Run run(String... args) {
    return LlmlatCliTest.run(args);
  }

  private String tsv(String sql) {
    LlmlatCliTest.Run r = run("sql", "--data-dir", dir.toString(), "--format", "tsv", sql);
    assertThat(r.exit()).as(r.err()).isZero();
    return r.out();
  }

  @Test
  void injectionStringsAreRefusedAsBadInputAndTheTablesStayIntact() throws Exception {
    LlmlatCliTest.store(dir);
    tsv(
        "INSERT INTO otel_traces (Timestamp, TraceId, SpanId, SpanName, ServiceName) VALUES"
            + " (now64(9), '"
            + TRACE
            + "', '00f067aa0ba902b7', 'llm_request', 'engine'),"
            + " (now64(9), '"
            + TRACE
            + "', '00f067aa0ba902b8', 'queue', 'engine')");
    String tablesBefore =
        tsv("SELECT name FROM system.tables WHERE database = 'default' ORDER BY name");
    String countsBefore =
        tsv(
            "SELECT (SELECT count() FROM otel_traces), (SELECT count() FROM llm_request_attribution)");
    assertThat(countsBefore).endsWith("2\t0\n");
    assertThat(tablesBefore).contains("otel_traces").contains("llm_request_attribution");

    List<String> hostile =
        List.of(
            "x' OR 1=1 --",
            "'); DROP TABLE otel_traces; --",
            TRACE + "' OR '1'='1",
            TRACE.toUpperCase() + "\u0000",
            "0af7651916cd43dd8448eb211c80319ç",
            "a".repeat(100_000),
            "' UNION SELECT * FROM system.users --");
    Path perfetto = dir.resolve("out.json");
    for (String bad : hostile) {
      String shown = bad.length() > 40 ? bad.substring(0, 40) : bad;
      LlmlatCliTest.Run explain = run("explain", "--data-dir", dir.toString(), bad);
      assertThat(explain.exit())
          .as("explain %s: %s", shown, explain.err())
          .isEqualTo(Llmlat.EXIT_USAGE);
      assertThat(explain.err()).contains("not a trace id (32 hex digits)");
      assertThat(explain.err().length())
          .as("the message quotes a long argument cut short")
          .isLessThan(300);
      LlmlatCliTest.Run export =
          run("export", "perfetto", "--data-dir", dir.toString(), bad, "-o", perfetto.toString());
      assertThat(export.exit())
          .as("export %s: %s", shown, export.err())
          .isEqualTo(Llmlat.EXIT_USAGE);
      assertThat(export.err()).contains("not a trace id");
      for (String command : List.of("analyze", "report")) {
        LlmlatCliTest.Run since = run(command, "--data-dir", dir.toString(), "--since", bad);
        assertThat(since.exit())
            .as("%s --since %s: %s", command, shown, since.err())
            .isEqualTo(Llmlat.EXIT_USAGE);
        assertThat(since.err()).contains("not a duration");
      }
    }
    for (String outOfRange : List.of("99999999999999999999d", "9223372036854775807d", "-5m")) {
      LlmlatCliTest.Run since = run("report", "--data-dir", dir.toString(), "--since", outOfRange);
      assertThat(since.exit())
          .as("--since %s: %s", outOfRange, since.err())
          .isEqualTo(Llmlat.EXIT_USAGE);
    }
    LlmlatCliTest.Run nan = run("report", "--data-dir", dir.toString(), "--slo-ttft", "NaN");
    assertThat(nan.exit()).as(nan.err()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(perfetto).doesNotExist();

    // a well-formed id that is not in the store takes the parameterized path and says so
    LlmlatCliTest.Run absent =
        run("explain", "--data-dir", dir.toString(), "ffffffffffffffffffffffffffffffff");
    assertThat(absent.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(absent.err()).contains("no request with trace id ffffffffffffffffffffffffffffffff");
    LlmlatCliTest.Run report = run("report", "--data-dir", dir.toString(), "--since", "1h");
    assertThat(report.exit()).as(report.err()).isZero();

    assertThat(tsv("SELECT name FROM system.tables WHERE database = 'default' ORDER BY name"))
        .isEqualTo(tablesBefore);
    assertThat(
            tsv(
                "SELECT (SELECT count() FROM otel_traces), (SELECT count() FROM llm_request_attribution)"))
        .isEqualTo(countsBefore);
  }

  @Test
  void helpOfEveryCommandAndServicesStatusNeverShowSecrets() throws Exception {
    Path passwordFile = Files.writeString(dir.resolve("pw"), SECRET + "\n");
    Path kafkaConfig =
        Files.writeString(
            dir.resolve("kafka.properties"), "sasl.jaas.config=x password=\"" + SECRET + "\";\n");
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                HelpOfEveryCommand.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().put("LLMLAT_HOME", dir.resolve("home").toString());
    pb.environment().put("LLMLAT_CLICKHOUSE_PASSWORD", SECRET);
    pb.environment().put("LLMLAT_CLICKHOUSE_PASSWORD_FILE", passwordFile.toString());
    pb.environment().put("LLMLAT_CLICKHOUSE_USER", "user-" + SECRET);
    pb.environment().put("LLMLAT_KAFKA_CONFIG", kafkaConfig.toString());
    Process p = pb.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isZero();
    int commands =
        Integer.parseInt(
            output
                .substring(output.lastIndexOf("== commands ") + 12)
                .lines()
                .findFirst()
                .orElseThrow());
    assertThat(commands).isGreaterThan(20);
    assertThat(output.split("Usage: llmlat", -1).length - 1)
        .as("one usage text per command")
        .isEqualTo(commands);
    assertThat(output)
        .contains("--clickhouse-password-file")
        .contains("--kafka-config")
        .contains("stopped");
    assertThat(output).doesNotContain(SECRET);
  }

  @Test
  void aFailingServerConnectionNeverShowsThePassword() throws Exception {
    Path passwordFile = Files.writeString(dir.resolve("pw"), SECRET + "\n");
    // nothing listens there
    LlmlatCliTest.Run down =
        run(
            "sql",
            "--clickhouse-url",
            "http://127.0.0.1:1",
            "--clickhouse-password-file",
            passwordFile.toString(),
            "SELECT 1");
    assertThat(down.exit()).isEqualTo(Llmlat.EXIT_FAILURE);
    assertThat(down.err()).contains("ClickHouse server http://127.0.0.1:1").doesNotContain(SECRET);

    try (EmbeddedClickHouse embedded =
            EmbeddedClickHouse.openConfined(
                dir.resolve("data"), EngineLibrary.locate(), Confinement.STRICT);
        ClickHouseHttpServer http = ClickHouseHttpServer.start(embedded, 0)) {
      // a query the server refuses, whose text (echoed in the error) holds the password
      LlmlatCliTest.Run refused =
          run(
              "sql",
              "--clickhouse-url",
              http.url(),
              "--clickhouse-password-file",
              passwordFile.toString(),
              "SELECT concat('" + SECRET + "', no_such_column)");
      assertThat(refused.exit()).isEqualTo(Llmlat.EXIT_FAILURE);
      assertThat(refused.err()).contains("refused").contains("******").doesNotContain(SECRET);
      LlmlatCliTest.Run fine =
          run(
              "sql",
              "--clickhouse-url",
              http.url(),
              "--clickhouse-password-file",
              passwordFile.toString(),
              "--clickhouse-option",
              "socket_timeout=30000",
              "--format",
              "tsv",
              "SELECT 41 + 1");
      assertThat(fine.exit()).as(fine.err()).isZero();
      assertThat(fine.out()).isEqualTo("plus(41, 1)\n42\n");
    }
    LlmlatCliTest.Run missing =
        run(
            "sql",
            "--clickhouse-url",
            "http://127.0.0.1:1",
            "--clickhouse-password-file",
            dir.resolve("nope").toString(),
            "SELECT 1");
    assertThat(missing.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(missing.err())
        .contains("ClickHouse password file " + dir.resolve("nope"))
        .contains("no such file");
    LlmlatCliTest.Run both =
        run(
            "sql",
            "--clickhouse-url",
            "http://127.0.0.1:1",
            "--clickhouse-password",
            "x",
            "--clickhouse-password-file",
            passwordFile.toString(),
            "SELECT 1");
    assertThat(both.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(both.err()).contains("one way");
    LlmlatCliTest.Run embedded =
        run(
            "sql",
            "--data-dir",
            dir.resolve("data").toString(),
            "--clickhouse-password-file",
            passwordFile.toString(),
            "SELECT 1");
    assertThat(embedded.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(embedded.err()).contains("--clickhouse-password-file is for a server");
    LlmlatCliTest.Run option =
        run(
            "sql",
            "--clickhouse-url",
            "http://127.0.0.1:1",
            "--clickhouse-option",
            "password=" + SECRET,
            "SELECT 1");
    assertThat(option.exit()).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(option.err()).contains("--clickhouse-password-file").doesNotContain(SECRET);
  }
}
