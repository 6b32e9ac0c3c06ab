package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.llmlat.store.confine.Confinement;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every way a client of store serve was found to reach the host (files, programs, other hosts, the
 * engine's life) is refused, by every method and client, with and without a password, while
 * ordinary use over the same interface keeps working.
 */
class StoreConfinementTest {
  static final String PASSWORD = "confined-Pw_42";
  @TempDir Path dir;
  Path host; // the host's files, outside the store
  Path secret;
  String secretText;
  HttpServer bystander; // another service on the host
  final AtomicInteger bystanderHits = new AtomicInteger();
  StoreFixture f;
  Http http;

  @BeforeEach
  void host() throws IOException {
    host = Files.createDirectories(dir.resolve("host"));
    secretText = "secret-" + UUID.randomUUID();
    secret = Files.writeString(host.resolve("secret.txt"), secretText + "\n");
    bystander = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    bystander.createContext(
        "/",
        exchange -> {
          bystanderHits.incrementAndGet();
          byte[] body = "1\tfrom-the-bystander\n".getBytes(StandardCharsets.UTF_8);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    bystander.start();
  }

  @AfterEach
  void stop() {
    bystander.stop(0);
    if (f != null) {
      f.close();
    }
  }

  private void serve(boolean withPassword) throws IOException, InterruptedException {
    ServerConfig config = ServerConfig.loopbackWithoutPassword(0);
    f =
        new StoreFixture(
            dir.resolve("store"), withPassword ? config.withPassword(PASSWORD) : config);
    http = withPassword ? f.http.withBasicAuth("default", PASSWORD) : f.http;
    assertThat(
            http.post("CREATE TABLE plain (k UInt64, v String) ENGINE = MergeTree ORDER BY k")
                .status())
        .isEqualTo(200);
  }

  private Path marker(String name) {
    return host.resolve(name);
  }

  /** The attacks, each a statement (or a few, the last of which would show the host's data). */
  private List<List<String>> attacks() {
    String s = secret.toString();
    String url = "http://127.0.0.1:" + bystander.getAddress().getPort();
    List<List<String>> a = new ArrayList<>();
    a.add(List.of("SELECT * FROM file('" + s + "', 'LineAsString')"));
    a.add(List.of("SELECT file('" + s + "')"));
    a.add(List.of("SELECT * FROM file('../host/secret.txt', 'LineAsString')"));
    a.add(List.of("DESCRIBE TABLE file('" + s + "', 'LineAsString')"));
    a.add(List.of("WITH (SELECT file('" + s + "')) AS x SELECT x"));
    a.add(List.of("SELECT `a\n Identifier b` FROM file('" + s + "', 'LineAsString')"));
    a.add(
        List.of(
            "INSERT INTO FUNCTION file('" + marker("m-insert") + "', 'LineAsString') SELECT 'x'"));
    a.add(
        List.of(
            "CREATE TABLE t_file (l String) ENGINE = File(LineAsString, '" + s + "')",
            "SELECT * FROM t_file"));
    a.add(
        List.of(
            "CREATE VIEW v_file AS SELECT * FROM file('" + s + "', 'LineAsString')",
            "SELECT * FROM v_file"));
    a.add(
        List.of(
            "ATTACH TABLE t_at FROM '" + host + "' (l String) ENGINE = File(LineAsString)",
            "SELECT * FROM t_at"));
    a.add(
        List.of(
            "CREATE DATABASE fsdb ENGINE = Filesystem('" + host + "')",
            "SELECT * FROM fsdb.`secret.txt`"));
    a.add(List.of("SELECT * FROM icebergLocal('" + host + "')"));
    a.add(List.of("SELECT * FROM sqlite('" + s + "', 't')"));
    a.add(
        List.of(
            "CREATE DICTIONARY d_file (k UInt64, v String) PRIMARY KEY k SOURCE(FILE(path '"
                + s
                + "' format 'TSV'))"
                + " LAYOUT(FLAT()) LIFETIME(0)",
            "SELECT * FROM d_file"));
    a.add(
        List.of(
            "CREATE DICTIONARY d_exec (k UInt64, v String) PRIMARY KEY k SOURCE(EXECUTABLE(command 'touch "
                + marker("m-dict-exec")
                + "' format 'TabSeparated')) LAYOUT(FLAT()) LIFETIME(0)",
            "SELECT * FROM d_exec"));
    a.add(List.of("SELECT * FROM executable('touch " + marker("m-exec") + "', 'TSV', 'x String')"));
    a.add(
        List.of(
            "CREATE TABLE t_exec (s String) ENGINE = Executable('touch "
                + marker("m-exec-engine")
                + "', TSV)",
            "SELECT * FROM t_exec"));
    a.add(
        List.of(
            "CREATE DICTIONARY d_lib (k UInt64, v String) PRIMARY KEY k SOURCE(LIBRARY(path '"
                + marker("lib.so")
                + "'))"
                + " LAYOUT(FLAT()) LIFETIME(0)",
            "SELECT * FROM d_lib"));
    a.add(
        List.of(
            "CREATE DICTIONARY d_ssd (k UInt64, v String) PRIMARY KEY k SOURCE(CLICKHOUSE(table 'plain'))"
                + " LAYOUT(SSD_CACHE(PATH '"
                + marker("m-ssd")
                + "' BLOCK_SIZE 4096)) LIFETIME(0)",
            "SELECT dictGet('d_ssd', 'v', 1)"));
    a.add(List.of("SELECT * FROM url('" + url + "/ssrf', 'LineAsString')"));
    a.add(
        List.of(
            "CREATE TABLE t_url (l String) ENGINE = URL('" + url + "/engine', LineAsString)",
            "SELECT * FROM t_url"));
    a.add(
        List.of(
            "CREATE DICTIONARY d_http (k UInt64, v String) PRIMARY KEY k SOURCE(HTTP(url '"
                + url
                + "/dict' format 'TSV')) LAYOUT(FLAT()) LIFETIME(0)",
            "SELECT * FROM d_http"));
    a.add(
        List.of(
            "CREATE DICTIONARY d_ch (k UInt64, v String) PRIMARY KEY k SOURCE(CLICKHOUSE(host '127.0.0.1' port "
                + bystander.getAddress().getPort()
                + " table 'x')) LAYOUT(FLAT()) LIFETIME(0)",
            "SELECT * FROM d_ch"));
    a.add(
        List.of(
            "SELECT hasColumnInTable('127.0.0.1:"
                + bystander.getAddress().getPort()
                + "', 'default', 't', 'x')"));
    a.add(
        List.of(
            "SELECT * FROM remote('127.0.0.1:"
                + bystander.getAddress().getPort()
                + "', system.one)"));
    a.add(List.of("SELECT * FROM s3('" + url + "/b/k.csv')"));
    a.add(
        List.of(
            "CREATE TABLE t_disk (x UInt8) ENGINE = MergeTree ORDER BY x SETTINGS disk = disk(type = 'web', endpoint = '"
                + url
                + "/web/')"));
    a.add(
        List.of(
            "CREATE TABLE t_ldisk (x UInt8) ENGINE = MergeTree ORDER BY x SETTINGS disk = disk(type = 'local', path = '"
                + marker("m-disk")
                + "/')"));
    a.add(
        List.of(
            "CREATE TABLE t_rocks (k UInt64, v String) ENGINE = EmbeddedRocksDB(0, '"
                + marker("m-rocks")
                + "') PRIMARY KEY k"));
    a.add(List.of("SELECT 1 INTO OUTFILE '" + marker("m-outfile") + "'"));
    a.add(List.of("EXPLAIN SELECT 1 INTO OUTFILE '" + marker("m-explain-outfile") + "'"));
    a.add(List.of("INSERT INTO plain FROM INFILE '" + s + "' FORMAT TSV"));
    a.add(List.of("BACKUP TABLE plain TO File('" + marker("m-backup") + "')"));
    a.add(List.of("SET dialect = 'kusto'"));
    a.add(
        List.of(
            "SELECT 1 SETTINGS output_format_schema = '"
                + marker("m-schema")
                + "' FORMAT Protobuf"));
    a.add(List.of("CREATE NAMED COLLECTION nc AS url = '" + url + "'"));
    // a second statement our own lexer misses (it takes ' inside the engine's unicode quotes for a
    // string)
    a.add(List.of("SELECT 1 AS \u201cit's\u201d; SELECT file('" + s + "')"));
    a.add(
        List.of(
            "SELECT 1 AS \u201cit's\u201d; INSERT INTO FUNCTION file('"
                + marker("m-second")
                + "', 'LineAsString') SELECT 'x'"));
    a.add(List.of("SYSTEM RELOAD CONFIG"));
    a.add(List.of("SYSTEM SHUTDOWN"));
    return a;
  }

  @ParameterizedTest(name = "with a password: {0}")
  @ValueSource(booleans = {false, true})
  void everyAttackIsRefusedByPostAndGetAndTheServerKeepsAnswering(boolean withPassword)
      throws Exception {
    serve(withPassword);
    for (List<String> attack : attacks()) {
      for (int i = 0; i < attack.size(); i++) {
        String sql = attack.get(i);
        // the first statement is refused as access denied; what uses its result then finds nothing
        // to use
        assertRefused(sql, http.post(sql), i == 0);
        assertRefused(sql, http.get(Map.of("query", sql)), i == 0);
      }
      assertServerAnswers();
    }
    // a refused statement gets no further by a parameter, a setting in the URL, or a session
    assertRefused(
        "file by parameter",
        http.post(
            Map.of("param_p", secret.toString()),
            "SELECT * FROM file({p:String}, 'LineAsString')"));
    assertRefused(
        "template setting",
        http.post(Map.of("format_template_row", secret.toString()), "SELECT 1 FORMAT Template"));
    assertRefused(
        "in a session",
        http.post(
            Map.of("session_id", "s1"), "SELECT * FROM file('" + secret + "', 'LineAsString')"));
    assertNothingOfTheHost();
  }

  private void assertRefused(String sql, Http.Reply reply) {
    assertRefused(sql, reply, true);
  }

  private void assertRefused(String sql, Http.Reply reply, boolean asAccessDenied) {
    assertThat(reply.status()).as(sql + " answered " + reply.body()).isNotEqualTo(200);
    if (asAccessDenied) {
      assertThat(reply.header("X-ClickHouse-Exception-Code"))
          .as(sql + ": " + reply.body())
          .isIn(
              "497", "291", "452",
              "164"); // ACCESS_DENIED, DATABASE_ACCESS_DENIED, SETTING_CONSTRAINT_VIOLATION,
      // READONLY (GET)
    }
    assertThat(reply.body())
        .as(sql)
        .doesNotContain(secretText)
        .doesNotContain("from-the-bystander");
  }

  private void assertServerAnswers() throws Exception {
    assertThat(new Http(f.server.url()).get(Map.of()).status()).isEqualTo(200);
    assertThat(http.post("SELECT 1").body()).isEqualTo("1\n");
  }

  private void assertNothingOfTheHost() throws IOException {
    try (var files = Files.list(host)) {
      assertThat(files.map(p -> p.getFileName().toString()).toList()).containsExactly("secret.txt");
    }
    assertThat(bystanderHits.get())
        .as("requests that reached another service of the host")
        .isZero();
  }

  @Test
  void ordinaryUseWorksOverTheSameInterface() throws Exception {
    serve(true);
    assertThat(http.post("INSERT INTO plain FORMAT TSV\n1\tone\n2\ttwo\n").status())
        .isEqualTo(200); // staged, read by the server
    assertThat(http.post(Map.of("query", "INSERT INTO plain FORMAT TSV"), "3\tthree\n").status())
        .isEqualTo(200);
    assertThat(http.post("INSERT INTO plain VALUES (4, 'four')").status()).isEqualTo(200);
    assertThat(http.post("SELECT count(), sum(k) FROM plain").body()).isEqualTo("4\t10\n");
    assertThat(
            http.post(
                    "CREATE DICTIONARY d (k UInt64, v String) PRIMARY KEY k SOURCE(CLICKHOUSE(table 'plain'))"
                        + " LAYOUT(FLAT()) LIFETIME(0)")
                .status())
        .isEqualTo(200);
    assertThat(http.post("SELECT dictGet('d', 'v', toUInt64(2))").body()).isEqualTo("two\n");
    assertThat(http.post("CREATE VIEW big AS SELECT k, v FROM plain WHERE k > 2").status())
        .isEqualTo(200);
    assertThat(http.post("SELECT v FROM big ORDER BY k FORMAT JSONEachRow").body())
        .isEqualTo("{\"v\":\"three\"}\n{\"v\":\"four\"}\n");
    assertThat(http.get(Map.of("query", "SELECT sum(number) FROM numbers(10)")).body())
        .isEqualTo("45\n");
    assertThat(
            http.get(Map.of("query", "SELECT name FROM system.databases WHERE name = 'default'"))
                .body())
        .isEqualTo("default\n");
    assertThat(http.get(Map.of("query", "SHOW TABLES")).body()).contains("plain");
    assertThat(http.get(Map.of("query", "DESCRIBE TABLE plain")).body()).startsWith("k\tUInt64");
    assertThat(http.post("EXPLAIN SELECT * FROM plain").status()).isEqualTo(200);
    assertThat(http.post("SYSTEM FLUSH LOGS").status()).isEqualTo(200);
    assertThat(
            http.post("ALTER TABLE plain DELETE WHERE k = 1 SETTINGS mutations_sync = 1").status())
        .isEqualTo(200);
    assertThat(http.post("OPTIMIZE TABLE plain FINAL").status()).isEqualTo(200);
    assertThat(http.post(Map.of("param_k", "3"), "SELECT v FROM plain WHERE k = {k:UInt64}").body())
        .isEqualTo("three\n");
    assertThat(http.post("SELECT 'infile and outfile are words in a string'").status())
        .isEqualTo(200);
    assertThat(http.post("SELECT * FROM view(SELECT 1 AS x) FORMAT TSV").body()).isEqualTo("1\n");
    assertThat(http.post("DROP TABLE big").status()).isEqualTo(200);
    // what Grafana's ClickHouse plugin asks (clickhouse-go over HTTP: Native answers, system
    // tables, macros expanded)
    assertThat(
            http.post(Map.of("default_format", "Native"), "SELECT version(), timezone()").status())
        .isEqualTo(200);
    assertThat(http.post("SELECT name FROM system.databases ORDER BY name").body())
        .contains("default\n");
    assertThat(
            http.post("SELECT name FROM system.tables WHERE database = 'default' ORDER BY name")
                .body())
        .contains("plain\n");
    assertThat(
            http.post(
                    Map.of("default_format", "Native"),
                    "SELECT name, type FROM system.columns WHERE database = 'default' AND table = 'plain'")
                .status())
        .isEqualTo(200);
    assertThat(
            http.post(
                    "SELECT toStartOfInterval(now(), INTERVAL 1 minute) AS t, count() FROM plain"
                        + " WHERE now() >= toDateTime(1700000000) AND now() <= toDateTime(4000000000) GROUP BY t ORDER BY t")
                .status())
        .isEqualTo(200);
  }

  @Test
  void allowSourcesWidensOnlyWhatItNames() throws Exception {
    f =
        new StoreFixture(
            dir.resolve("store"),
            ServerConfig.loopbackWithoutPassword(0),
            Confinement.allowing("url"));
    http = f.http;
    String url = "http://127.0.0.1:" + bystander.getAddress().getPort();
    assertThat(
            http.post("SELECT * FROM url('" + url + "/allowed', 'TSV', 'k UInt64, v String')")
                .body())
        .isEqualTo("1\tfrom-the-bystander\n");
    assertThat(
            http.post(
                    "CREATE TABLE t_url (k UInt64, v String) ENGINE = URL('"
                        + url
                        + "/engine', TSV)")
                .status())
        .isEqualTo(200);
    assertThat(http.post("SELECT v FROM t_url").body()).isEqualTo("from-the-bystander\n");
    assertThat(bystanderHits.get()).isPositive(); // the engine may ask with HEAD first
    // the rest stays refused: files, programs, other kinds of hosts
    assertRefused("file", http.post("SELECT * FROM file('" + secret + "', 'LineAsString')"));
    assertRefused("remote", http.post("SELECT * FROM remote('127.0.0.1:1', system.one)"));
    assertRefused(
        "executable",
        http.post("SELECT * FROM executable('touch " + marker("m") + "', 'TSV', 'x String')"));
    assertThat(Files.exists(marker("m"))).isFalse();
  }

  @Test
  void unknownSourcesAreNamed() {
    assertThatThrownBy(() -> Confinement.allowing("url,ftp"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'ftp'")
        .hasMessageContaining("url, s3");
  }

  @Test
  void theJdbcDriverIsConfinedToo() throws Exception {
    serve(true);
    Properties p = new Properties();
    p.setProperty("user", "default");
    p.setProperty("password", PASSWORD);
    String jdbc = "jdbc:clickhouse:" + f.server.url() + "/default";
    try (Connection c = DriverManager.getConnection(jdbc, p);
        Statement st = c.createStatement()) {
      for (List<String> attack : attacks()) {
        for (String sql : attack) {
          try (ResultSet rs = st.executeQuery(sql)) {
            StringBuilder seen = new StringBuilder();
            while (rs.next()) {
              seen.append(rs.getString(1));
            }
            throw new AssertionError(sql + " ran through JDBC and gave " + seen);
          } catch (SQLException refused) {
            assertThat(refused.getMessage())
                .as(sql)
                .doesNotContain(secretText)
                .doesNotContain("from-the-bystander");
            if (sql.equals(attack.get(0))) {
              assertThat(refused.getMessage())
                  .as(sql)
                  .containsAnyOf(
                      "ACCESS_DENIED", "SETTING_CONSTRAINT_VIOLATION", "DATABASE_ACCESS_DENIED");
            }
          }
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT count() FROM plain")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(1)).isZero();
      }
    }
    assertNothingOfTheHost();
  }

  @Test
  void withoutAPasswordOnlyLoopbackHostsAreAnswered() throws Exception {
    serve(false);
    int port = f.server.port();
    assertThat(raw("POST", "/", "evil.example:" + port, null, "SELECT 1"))
        .startsWith("HTTP/1.1 403");
    assertThat(raw("GET", "/ping", "attacker.test", null, null)).startsWith("HTTP/1.1 403");
    assertThat(raw("POST", "/", "localhost:" + (port == 1 ? 2 : port - 1), null, "SELECT 1"))
        .startsWith("HTTP/1.1 403");
    for (String name :
        List.of(
            "localhost:" + port,
            "127.0.0.1:" + port,
            "[::1]:" + port,
            "LOCALHOST:" + port,
            "127.0.0.1")) {
      assertThat(raw("POST", "/", name, null, "SELECT 1"))
          .as(name)
          .startsWith("HTTP/1.1 200")
          .endsWith("\r\n\r\n1\n");
    }
  }

  @ParameterizedTest(name = "with a password: {0}")
  @ValueSource(booleans = {false, true})
  void aForeignOriginIsRefusedWithoutCorsHeaders(boolean withPassword) throws Exception {
    serve(withPassword);
    String host = "127.0.0.1:" + f.server.port();
    String auth =
        withPassword
            ? "Authorization: Basic "
                + java.util.Base64.getEncoder()
                    .encodeToString(("default:" + PASSWORD).getBytes(StandardCharsets.UTF_8))
                + "\r\n"
            : "";
    for (String origin :
        List.of(
            "http://evil.example",
            "null",
            "http://localhost:" + f.server.port() + ".evil.example")) {
      String reply =
          raw(
              "POST",
              "/",
              host,
              "Origin: " + origin + "\r\n" + auth,
              "INSERT INTO plain VALUES (1, 'x')");
      assertThat(reply)
          .as(origin)
          .startsWith("HTTP/1.1 403")
          .doesNotContainIgnoringCase("Access-Control-");
    }
    String crossSite =
        raw(
            "POST",
            "/",
            host,
            "Sec-Fetch-Site: cross-site\r\n" + auth,
            "INSERT INTO plain VALUES (1, 'x')");
    assertThat(crossSite).startsWith("HTTP/1.1 403");
    assertThat(http.post("SELECT count() FROM plain").body()).isEqualTo("0\n");
    assertThat(raw("POST", "/", host, auth, "SELECT 1"))
        .startsWith("HTTP/1.1 200"); // no Origin: a program, not a page
  }

  /**
   * One request on a socket of its own, the Host header as given: what a browser under DNS
   * rebinding sends.
   */
  private String raw(
      String method, String path, String hostHeader, String extraHeaders, String body)
      throws IOException {
    byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Host", hostHeader);
    headers.put("Connection", "close");
    StringBuilder req = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
    headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
    if (extraHeaders != null) {
      req.append(extraHeaders);
    }
    req.append("Content-Length: ").append(b.length).append("\r\n\r\n");
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), f.server.port())) {
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      out.write(req.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(b);
      out.flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
