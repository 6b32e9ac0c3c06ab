package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.testing.RequiredTools;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official JavaScript client ({@code @clickhouse/client}, written by no one here) against the
 * store: password, parameters, sessions, settings, compressed inserts and answers, streamed rows,
 * ClickHouse's error codes. npm installs it once into the user's cache; without Node.js, npm or the
 * registry the test skips or fails, saying why, as {@link RequiredTools} says. It lives in this
 * module for that rule (module testing, which has it, builds on the store) and reaches the store's
 * {@code StoreFixture} through the store's test jar.
 */
class JavaScriptClientTest {
  static final String VERSION = "1.23.1";
  @TempDir Path dir;

  @Test
  void theOfficialJavaScriptClientWorksAgainstTheStore() throws Exception {
    Path client = installedClient();
    Path script = dir.resolve("check.mjs");
    try (InputStream in = getClass().getResourceAsStream("/js-client/check.mjs")) {
      Files.copy(in, script);
    }
    String password = "js-Pw-0123456789";
    try (StoreFixture f =
        new StoreFixture(
            dir.resolve("data"), ServerConfig.loopbackWithoutPassword(0).withPassword(password))) {
      ProcessBuilder pb =
          new ProcessBuilder("node", script.toString(), f.server.url(), password)
              .redirectErrorStream(true);
      pb.environment().put("CLIENT_DIR", client.toString());
      Process node = pb.start();
      String output = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(node.waitFor(120, TimeUnit.SECONDS)).isTrue();
      String json = output.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElse("{}");
      JsonNode seen = new ObjectMapper().readTree(json);
      assertThat(seen.has("failure")).as(output).isFalse();
      assertThat(seen.get("ping").asBoolean()).isTrue();
      assertThat(seen.get("count").asInt()).isEqualTo(1000);
      assertThat(seen.get("top").asInt()).isEqualTo(999);
      assertThat(seen.get("params").toString())
          .isEqualTo("[\"alpha\",\"beta\",\"gamma\",\"delta\"]");
      assertThat(seen.get("sessionThreads").asText()).isEqualTo("1");
      assertThat(seen.get("sessionTmp").asText()).isEqualTo("7");
      assertThat(seen.get("outsideThreads").asText()).isNotEqualTo("1");
      assertThat(seen.get("oneQuerySetting").asText()).isEqualTo("1234");
      assertThat(seen.get("nextQuerySetting").asText()).isNotEqualTo("1234");
      assertThat(seen.get("streamed").asInt()).isEqualTo(200_000);
      assertThat(seen.get("error").get("code").asText()).isEqualTo("62");
      assertThat(seen.get("error").get("type").asText()).isEqualTo("SYNTAX_ERROR");
      assertThat(seen.get("wrongPassword").get("code").asText()).isEqualTo("516");
      assertThat(seen.get("wrongPassword").get("type").asText()).isEqualTo("AUTHENTICATION_FAILED");
      assertThat(seen.get("hostFile").get("code").asText()).isEqualTo("497");
      assertThat(seen.get("hostFile").get("type").asText()).isEqualTo("ACCESS_DENIED");
      assertThat(seen.get("shutdown").get("code").asText()).isEqualTo("497");
      assertThat(seen.get("afterShutdown").toString()).isEqualTo("[{\"x\":42}]");
    }
  }

  /**
   * The client installed by npm into the user's cache; without it the test skips or fails as {@link
   * RequiredTools} says.
   */
  private static Path installedClient() throws IOException, InterruptedException {
    RequiredTools.require(
        works(List.of("node", "--version")),
        "node is not installed: the JavaScript client's test needs Node.js 18+");
    String cache = System.getenv("LLMLAT_CACHE");
    Path root =
        cache != null && !cache.isBlank()
            ? Path.of(cache)
            : Path.of(System.getProperty("user.home"), ".cache", "llmlat");
    Path prefix = root.resolve("npm").resolve("clickhouse-client-" + VERSION);
    if (Files.exists(prefix.resolve("node_modules/@clickhouse/client/package.json"))) {
      return prefix;
    }
    RequiredTools.require(
        works(List.of("npm", "--version")),
        "npm is not installed: it installs @clickhouse/client for this test");
    Files.createDirectories(prefix);
    Process npm =
        new ProcessBuilder(
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                prefix.toString(),
                "@clickhouse/client@" + VERSION)
            .redirectErrorStream(true)
            .start();
    String log = new String(npm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    boolean done = npm.waitFor(300, TimeUnit.SECONDS);
    RequiredTools.require(
        done && npm.exitValue() == 0,
        "npm could not install @clickhouse/client@" + VERSION + ": " + log.strip());
    return prefix;
  }

  private static boolean works(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException | InterruptedException e) {
      return false;
    }
  }
}
