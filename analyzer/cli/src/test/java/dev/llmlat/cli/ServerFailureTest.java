package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.llmlat.testing.Await;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server that cannot be used is said in a few lines naming its URL and why; the stack trace only
 * with --verbose.
 */
class ServerFailureTest {
  @TempDir Path dir;

  /**
   * Runs {@code report} against {@code url} and checks the answer is short, names the URL and
   * {@code cause}, and has no frames.
   */
  private static LlmlatCliTest.Run failsBriefly(String url, String cause, String... more) {
    List<String> args = new ArrayList<>(List.of("report", "--clickhouse-url", url));
    args.addAll(List.of(more));
    LlmlatCliTest.Run r = LlmlatCliTest.run(args.toArray(String[]::new));
    assertThat(r.exit()).as(r.err()).isNotZero();
    assertThat(r.err()).contains(url).contains(cause).doesNotContain("\tat ");
    assertThat(r.err().strip().lines()).as(r.err()).hasSizeLessThanOrEqualTo(5);
    return r;
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void aRefusedPortIsSaidInALineAndVerboseShowsTheTrace() throws Exception {
    String url = "http://127.0.0.1:" + freePort();
    failsBriefly(url, "connection refused");
    LlmlatCliTest.Run verbose = LlmlatCliTest.run("report", "--clickhouse-url", url, "--verbose");
    assertThat(verbose.exit()).isEqualTo(Llmlat.EXIT_FAILURE);
    assertThat(verbose.err()).contains("connection refused").contains("\tat ");
  }

  @Test
  @Timeout(
      value = 5,
      unit =
          TimeUnit
              .MINUTES) // against a hang only, should the driver not be given the socket_timeout
  void aServerThatNeverAnswersTimesOut() throws Exception {
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      List<Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    held.add(silent.accept()); // and never a byte back
                  }
                } catch (java.io.IOException closed) {
                  // the test is over
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
      // the timeout that fired is the one given (1000 ms), not a default: the message names it
      failsBriefly(
          "http://127.0.0.1:" + silent.getLocalPort(),
          "timed out: it accepted the connection but sent no answer within 1 s",
          "--clickhouse-option",
          "socket_timeout=1000");
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void anHttpServerThatIsNotClickHouseIsNamedWithWhatItAnswered() throws Exception {
    HttpServer sse =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    sse.createContext(
        "/",
        exchange -> {
          exchange.getRequestBody().readAllBytes();
          exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
          byte[] body =
              "data: {\"id\":\"chatcmpl-1\",\"choices\":[]}\n\n".getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
          }
        });
    sse.start();
    try {
      String url = "http://127.0.0.1:" + sse.getAddress().getPort();
      assertThat(failsBriefly(url, "is not a ClickHouse server").err())
          .contains("HTTP 200 with text/event-stream");
      LlmlatCliTest.Run sql = LlmlatCliTest.run("sql", "--clickhouse-url", url, "SELECT 1");
      assertThat(sql.exit()).isEqualTo(Llmlat.EXIT_FAILURE);
      assertThat(sql.err())
          .contains(
              url + " is not a ClickHouse server: it answered HTTP 200 with text/event-stream");
    } finally {
      sse.stop(0);
    }
  }

  /** llmlat's own store process, as users start it, refusing a wrong password. */
  @Test
  void aWrongPasswordIsAFailedAuthentication() throws Exception {
    Path passwordFile = Files.writeString(dir.resolve("store.password"), "the-right-one\n");
    Path log = dir.resolve("store.log");
    Process store =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED",
                    "-cp",
                    System.getProperty("java.class.path"),
                    Llmlat.class.getName(),
                    "store",
                    "serve",
                    "--port",
                    "0",
                    "--data-dir",
                    dir.resolve("data").toString(),
                    "--password-file",
                    passwordFile.toString()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
    try {
      String url = awaitUrl(store, log);
      LlmlatCliTest.Run r =
          failsBriefly(
              url,
              "authentication failed for user default",
              "--clickhouse-user",
              "default",
              "--clickhouse-password",
              "a-wrong-one");
      assertThat(r.err()).doesNotContain("a-wrong-one").doesNotContain("the-right-one");
      LlmlatCliTest.Run right =
          LlmlatCliTest.run(
              "sql",
              "--clickhouse-url",
              url,
              "--clickhouse-user",
              "default",
              "--clickhouse-password",
              "the-right-one",
              "--format",
              "tsv",
              "SELECT 1 AS one");
      assertThat(right.exit()).as(right.err()).isZero();
      assertThat(right.out()).isEqualTo("one\n1\n");
    } finally {
      store.destroy();
      store.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** The URL from the store's "serving ... at URL ..." line. */
  private static String awaitUrl(Process store, Path log) throws Exception {
    return Await.logged(store, log, Pattern.compile("serving .* at (http://\\S+)"), 120).group(1);
  }
}
