package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.runtime.home.LlmlatHome;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `services up|status|down` for real: three child JVMs under a scratch home, the demo through them.
 */
class ServicesCommandTest {
  @TempDir Path home;

  record Run(int exit, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = Llmlat.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(exit, out.toString(), err.toString());
  }

  @BeforeEach
  void useScratchHome() {
    System.setProperty(LlmlatHome.PROPERTY, home.toString());
  }

  @AfterEach
  void stopEverything() {
    run("services", "down");
    System.clearProperty(LlmlatHome.PROPERTY);
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void upRunsBrokerStoreAndIngesterThatTheDemoAndSqlUse() throws IOException, InterruptedException {
    int storePort = freePort();
    Run up =
        run(
            "services",
            "up",
            "--kafka-port",
            Integer.toString(freePort()),
            "--kafka-controller-port",
            Integer.toString(freePort()),
            "--store-port",
            Integer.toString(storePort),
            "--partitions",
            "2");
    assertThat(up.exit()).as(up.err()).isZero();
    assertThat(up.out())
        .containsPattern("kafka\\s+running\\s+\\d+\\s+127.0.0.1:")
        .containsPattern("store\\s+running\\s+\\d+\\s+http://127.0.0.1:" + storePort)
        .containsPattern("ingest\\s+running")
        .containsPattern("attribute\\s+running");
    // the store wants the password made into the home (0600); every llmlat client below passes it
    Path passwordFile = home.resolve("store.password");
    assertThat(up.out())
        .contains("store user: default, password in " + passwordFile + " (mode 0600)");
    assertThat(
            java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(passwordFile)))
        .isEqualTo("rw-------");
    String password = Files.readString(passwordFile).strip();
    java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient();
    java.net.URI uri = java.net.URI.create("http://127.0.0.1:" + storePort + "/");
    try {
      assertThat(
              client
                  .send(
                      java.net.http.HttpRequest.newBuilder(uri)
                          .POST(java.net.http.HttpRequest.BodyPublishers.ofString("SELECT 1"))
                          .build(),
                      java.net.http.HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(401);
      assertThat(
              client
                  .send(
                      java.net.http.HttpRequest.newBuilder(uri)
                          .header("X-ClickHouse-Key", password)
                          .POST(java.net.http.HttpRequest.BodyPublishers.ofString("SELECT 1"))
                          .build(),
                      java.net.http.HttpResponse.BodyHandlers.ofString())
                  .body())
          .isEqualTo("1\n");
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    assertThat(
            run(
                    "sql",
                    "--clickhouse-url",
                    "http://127.0.0.1:" + storePort,
                    "--format",
                    "tsv",
                    "SELECT 5")
                .out())
        .isEqualTo("5\n5\n");
    Run again = run("services", "up", "--store-port", Integer.toString(storePort));
    assertThat(again.out())
        .isEqualTo(run("services", "status").out()); // reused, nothing new started

    Run demo = run("demo", "--requests", "2", "--time-scale", "0.1");
    assertThat(demo.exit()).as(demo.err()).isZero();
    assertThat(demo.out())
        .contains("store: ClickHouse server http://127.0.0.1:" + storePort)
        .contains("analyzed: 2 requests attributed");
    String requests = "SELECT count() FROM otel_traces WHERE SpanName = 'llm_request'";
    Run sql = run("sql", "--format", "tsv", requests);
    assertThat(sql.out()).isEqualTo("count()\n2\n");
    // the live attributor of the services attributed the demo's requests from the span topic too
    String live =
        "SELECT count() FROM llm_request_attribution WHERE AnalyzerVersion = 'llmlat-live 0.1'";
    dev.llmlat.testing.Await.until(
        () -> run("sql", "--format", "tsv", live).out().equals("count()\n2\n"),
        "the live attributor's rows of the demo's 2 requests",
        60);

    Run down = run("services", "down");
    assertThat(down.out())
        .startsWith("stopped ingest (pid ")
        .contains("attribute (pid ")
        .contains("store (pid ")
        .contains("kafka (pid ");
    assertThat(run("services", "status").out())
        .containsPattern("kafka\\s+stopped")
        .containsPattern("ingest\\s+stopped")
        .containsPattern("attribute\\s+stopped");
    assertThat(Files.list(home.resolve("run")).toList()).isEmpty();
    // the data outlived the store process: the embedded store opens it directly now
    assertThat(run("sql", "--format", "tsv", requests).out()).isEqualTo("count()\n2\n");
  }

  @Test
  void aBusyStorePortIsNamed() throws IOException {
    try (ServerSocket busy = new ServerSocket(0)) {
      Run up =
          run(
              "services",
              "up",
              "--kafka-port",
              Integer.toString(freePort()),
              "--kafka-controller-port",
              Integer.toString(freePort()),
              "--store-port",
              Integer.toString(busy.getLocalPort()));
      assertThat(up.exit()).isEqualTo(1);
      assertThat(up.err()).contains("port " + busy.getLocalPort() + " on 127.0.0.1 is in use");
    }
  }
}
