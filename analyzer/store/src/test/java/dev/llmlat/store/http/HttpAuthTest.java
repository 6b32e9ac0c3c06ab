package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.store.JdbcClickHouse;
import dev.llmlat.store.StoreConfig;
import dev.llmlat.store.StoreException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A store started with a password answers only those who give it, the ways ClickHouse takes it. */
class HttpAuthTest {
  static final String PASSWORD = "s3cret-Pw_123";
  @TempDir Path dir;
  StoreFixture f;
  Http http;

  @BeforeEach
  void start() throws Exception {
    f = new StoreFixture(dir, ServerConfig.loopbackWithoutPassword(0).withPassword(PASSWORD));
    http = f.http;
  }

  @AfterEach
  void stop() {
    f.close();
  }

  @Test
  void withoutTheRightPasswordNothingRuns() throws Exception {
    Http.Reply none = http.post("CREATE TABLE t (a UInt8) ENGINE = Memory");
    assertThat(none.status()).isEqualTo(401);
    assertThat(none.header("X-ClickHouse-Exception-Code")).isEqualTo("194");
    assertThat(none.header("WWW-Authenticate")).startsWith("Basic");
    assertThat(none.body()).endsWith("(REQUIRED_PASSWORD)\n");

    Http.Reply wrong = new Http(f.server.url()).withBasicAuth("default", "guess").post("SELECT 1");
    assertThat(wrong.status()).isEqualTo(403);
    assertThat(wrong.header("X-ClickHouse-Exception-Code")).isEqualTo("516");
    assertThat(wrong.body())
        .contains("Authentication failed")
        .endsWith("(AUTHENTICATION_FAILED)\n")
        .doesNotContain(PASSWORD);
    Http.Reply otherUser =
        new Http(f.server.url()).withBasicAuth("admin", PASSWORD).post("SELECT 1");
    assertThat(otherUser.status()).isEqualTo(403);
    assertThat(
            http.send("POST", Map.of("password", "guess"), Map.of(), "SELECT 1".getBytes())
                .status())
        .isEqualTo(403);
    assertThat(
            http.send(
                    "POST",
                    Map.of(),
                    Map.of("X-ClickHouse-User", "default", "X-ClickHouse-Key", "guess"),
                    "SELECT 1".getBytes())
                .status())
        .isEqualTo(403);
    // two ways at once is refused, as ClickHouse refuses it
    Http.Reply both =
        new Http(f.server.url())
            .withBasicAuth("default", PASSWORD)
            .send("POST", Map.of(), Map.of("X-ClickHouse-Key", PASSWORD), "SELECT 1".getBytes());
    assertThat(both.status()).isEqualTo(401);

    // nothing ran: the table does not exist
    Http.Reply check =
        new Http(f.server.url()).withBasicAuth("default", PASSWORD).post("EXISTS TABLE t");
    assertThat(check.body()).isEqualTo("0\n");
    // /ping needs no password, as on ClickHouse
    assertThat(http.send("GET", Map.of(), Map.of(), null).body()).isEqualTo("Ok.\n");
  }

  @Test
  void everyWayClickHouseTakesThePasswordWorks() throws Exception {
    assertThat(new Http(f.server.url()).withBasicAuth("default", PASSWORD).post("SELECT 1").body())
        .isEqualTo("1\n");
    assertThat(
            http.send(
                    "POST",
                    Map.of(),
                    Map.of("X-ClickHouse-User", "default", "X-ClickHouse-Key", PASSWORD),
                    "SELECT 2".getBytes())
                .body())
        .isEqualTo("2\n");
    assertThat(
            http.send(
                    "POST",
                    Map.of("user", "default", "password", PASSWORD),
                    Map.of(),
                    "SELECT 3".getBytes())
                .body())
        .isEqualTo("3\n");
    assertThat(http.get(Map.of("query", "SELECT 4", "password", PASSWORD)).body()).isEqualTo("4\n");
  }

  @Test
  void theOfficialDriverConnectsWithThePasswordOnly() {
    try (JdbcClickHouse ok =
        JdbcClickHouse.open(StoreConfig.server(f.server.url(), "default", PASSWORD))) {
      assertThat(ok.query("SELECT 40 + 2").single()).isEqualTo("42");
    }
    assertThatThrownBy(
            () -> {
              try (JdbcClickHouse bad =
                  JdbcClickHouse.open(StoreConfig.server(f.server.url(), "default", "guess"))) {
                bad.query("SELECT 1");
              }
            })
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("516")
        .hasMessageNotContaining(PASSWORD);
  }

  @Test
  void noPasswordIsOnlyForLoopback() throws Exception {
    ServerConfig open = ServerConfig.loopbackWithoutPassword(0);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> open.withBind(InetAddress.getByName("0.0.0.0")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("loopback");
    assertThat(open.withPassword(PASSWORD).withBind(InetAddress.getByName("0.0.0.0")).toString())
        .doesNotContain(PASSWORD);
  }
}
