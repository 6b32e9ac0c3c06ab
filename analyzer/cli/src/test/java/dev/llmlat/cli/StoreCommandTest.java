package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.testing.Await;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `llmlat store serve` as users start it: with a password by default, never reading its stdin into
 * INSERTs.
 */
class StoreCommandTest {
  @TempDir Path dir;

  @Test
  void noAuthIsForLoopbackOnly() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        Llmlat.run(
            new String[] {
              "store",
              "serve",
              "--no-auth",
              "--bind",
              "0.0.0.0",
              "--port",
              "0",
              "--data-dir",
              dir.resolve("data").toString()
            },
            new PrintWriter(out, true),
            new PrintWriter(err, true));
    assertThat(exit).isEqualTo(Llmlat.EXIT_USAGE);
    assertThat(err.toString()).contains("--no-auth is for a loopback address only");
  }

  @Test
  void servesWithAGeneratedPasswordAndIgnoresItsStdin() throws Exception {
    Path passwordFile = dir.resolve("home").resolve("store.password");
    Path log = dir.resolve("store.log");
    Process store =
        new ProcessBuilder(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED",
                    "-cp",
                    System.getProperty("java.class.path"),
                    "dev.llmlat.cli.Llmlat",
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
            .start();
    // a line waiting on the store's stdin: chDB would take it as INSERT data
    OutputStream stdin = store.getOutputStream();
    stdin.write("garbage-from-stdin\n".getBytes(StandardCharsets.UTF_8));
    stdin.flush();
    try {
      HttpClient http = HttpClient.newHttpClient();
      // the store says where it serves once it does
      URI base =
          URI.create(
              Await.logged(store, log, Pattern.compile("serving .* at (http://\\S+)"), 120).group(1)
                  + "/");
      assertThat(
              http.send(
                      HttpRequest.newBuilder(base.resolve("/ping")).build(),
                      HttpResponse.BodyHandlers.ofString())
                  .body())
          .isEqualTo("Ok.\n");
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(passwordFile)))
          .isEqualTo("rw-------");
      String password = Files.readString(passwordFile).strip();
      assertThat(post(http, base, "", null, "SELECT 1").statusCode()).isEqualTo(401);
      assertThat(
              post(
                      http,
                      base,
                      "",
                      password,
                      "CREATE TABLE t (s String) ENGINE = MergeTree ORDER BY s")
                  .statusCode())
          .isEqualTo(200);
      assertThat(post(http, base, "", password, "INSERT INTO t VALUES ('a')").statusCode())
          .isEqualTo(200);
      assertThat(
              post(http, base, "?query=INSERT%20INTO%20t%20FORMAT%20TSV", password, "b\n")
                  .statusCode())
          .isEqualTo(200);
      assertThat(post(http, base, "", password, "SELECT s FROM t ORDER BY s").body())
          .isEqualTo("a\nb\n");
    } finally {
      store.destroy();
      assertThat(store.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  private static HttpResponse<String> post(
      HttpClient http, URI base, String query, String password, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + query))
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (password != null) {
      b.header("X-ClickHouse-User", "default").header("X-ClickHouse-Key", password);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
