package dev.llmlat.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.SpanFixtures;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server path, for real: the unmodified official driver against the store's HTTP interface. */
class JdbcClickHouseTest {
  @TempDir Path dir;
  EmbeddedClickHouse embedded;
  ClickHouseHttpServer http;
  JdbcClickHouse server;

  @BeforeEach
  void start() throws IOException {
    embedded = EmbeddedClickHouse.openConfined(dir, EngineLibrary.locate(), Confinement.STRICT);
    http = ClickHouseHttpServer.start(embedded, 0);
    server =
        JdbcClickHouse.open(
            StoreConfig.server("jdbc:clickhouse:" + http.url(), "default", "secret-pw"));
  }

  @AfterEach
  void stop() {
    server.close();
    http.close();
    embedded.close();
  }

  @Test
  void migratesInsertsAndReadsBackEverySpanField() {
    SchemaMigrator.Outcome outcome = SchemaMigrator.bundled().migrate(server);
    assertThat(outcome.applied()).hasSize(SchemaMigrator.bundled().migrations().size());
    new OtelTracesRowEncoder().add(SpanFixtures.everyField()).insertInto(server, "span-batch-1");
    SpanFixtures.assertEveryFieldStored(server);
    // the same rows, the same text on both stores
    String sql =
        "SELECT Timestamp, SpanAttributes, Events.Timestamp, Links.Attributes FROM otel_traces";
    assertThat(server.query(sql)).isEqualTo(embedded.query(sql));
  }

  @Test
  void queryParametersCarryHostileTextAsValuesOnBothStores() {
    SchemaMigrator.bundled().migrate(server);
    String countBefore =
        embedded.query("SELECT count() FROM system.tables WHERE database = 'default'").single();
    List<String> hostile =
        List.of(
            "x' OR 1=1 --",
            "'); DROP TABLE otel_traces; --",
            "tab\there\nnewline \\ back\\slash",
            "ünïcødé 😀 'quoted' \"dq\"",
            "{other:String}",
            "x".repeat(100_000));
    for (String value : hostile) {
      for (ClickHouseStore store : List.of(embedded, server)) {
        QueryResult r =
            store.query("SELECT {v:String} AS v, length({v:String}) AS n", Map.of("v", value));
        assertThat(r.rows().get(0).get(1))
            .as(
                "%s on %s",
                value.length() > 40 ? value.substring(0, 40) : value, store.description())
            .isEqualTo(
                Long.toString(value.getBytes(java.nio.charset.StandardCharsets.UTF_8).length));
        assertThat(
                store.queryRowBinary(
                    "SELECT {v:String} = {w:String}", Map.of("v", value, "w", value)))
            .as("RowBinary: one true UInt8")
            .containsExactly(1);
      }
    }
    assertThat(
            server
                .query(
                    "SELECT {a:Int64} + 1, {ids:Array(String)}",
                    Map.of("a", -5L, "ids", "['a','b']"))
                .rows())
        .containsExactly(List.of("-4", "['a','b']"));
    assertThat(
            embedded.query("SELECT count() FROM system.tables WHERE database = 'default'").single())
        .isEqualTo(countBefore);
    assertThatThrownBy(() -> embedded.query("SELECT {v:String}", Map.of("v; DROP", "x")))
        .hasMessageContaining("not a query parameter name");
  }

  @Test
  void driverErrorsNeverShowThePassword() {
    // the password appears in the SQL here, so the server's error echoes it back: blotted out
    assertThatThrownBy(() -> server.query("SELECT concat('secret-pw', no_such_column)"))
        .isInstanceOf(StoreException.class)
        .hasMessageNotContaining("secret-pw")
        .hasMessageContaining("******");
  }

  @Test
  void aRetriedBatchWithTheSameTokenIsNotDuplicated() {
    server.execute(
        "CREATE TABLE d (n UInt32) ENGINE = MergeTree ORDER BY n SETTINGS non_replicated_deduplication_window = 100");
    byte[] rows = new RowBinaryWriter(8).uint32(1).uint32(2).toByteArray();
    server.insertRowBinary("d", List.of("n"), rows, "topic-0-100-199");
    server.insertRowBinary("d", List.of("n"), rows, "topic-0-100-199");
    assertThat(server.query("SELECT count() FROM d").single()).isEqualTo("2");
    // the setting applied to that insert only
    assertThat(
            embedded
                .query(
                    "SELECT value FROM system.settings WHERE name = 'insert_deduplication_token'")
                .single())
        .isEmpty();
  }

  @Test
  void plainJdbcReadsDateTime64MapsQuantilesAndWindows() throws Exception {
    server.execute(
        "CREATE TABLE w (ts DateTime64(9), k String, v Float64, m Map(String, String)) ENGINE = MergeTree ORDER BY ts");
    server.execute(
        "INSERT INTO w VALUES ('2026-11-29 10:00:00.000000001', 'a', 1, {'x':'1'}),"
            + " ('2026-11-29 10:00:00.000000002', 'a', 3, {'x':'2'}), ('2026-11-29 10:00:00.000000003', 'b', 5, {})");
    try (Statement st = server.jdbc().createStatement()) {
      try (ResultSet rs =
          st.executeQuery(
              "SELECT ts, m, sum(v) OVER (PARTITION BY k ORDER BY ts) AS running FROM w ORDER BY ts")) {
        List<String> got = new ArrayList<>();
        while (rs.next()) {
          LocalDateTime ts = rs.getObject(1, LocalDateTime.class);
          @SuppressWarnings("unchecked")
          Map<String, String> m = (Map<String, String>) rs.getObject(2);
          got.add(ts.getNano() + " " + m + " " + rs.getDouble(3));
        }
        assertThat(got).containsExactly("1 {x=1} 1.0", "2 {x=2} 4.0", "3 {} 5.0");
      }
      try (ResultSet rs =
          st.executeQuery(
              "SELECT quantileExact(0.5)(v) AS p50, quantilesExact(0.0, 1.0)(v) AS q FROM w")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getDouble("p50")).isEqualTo(3.0);
        assertThat(rs.getString("q")).isEqualTo("[1.0, 5.0]");
      }
    }
  }

  @Test
  void refusalsCarryClickHousesMessageButNeverThePassword() {
    assertThatThrownBy(() -> server.query("SELECT * FROM missing_table"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("missing_table")
        .hasMessageNotContaining("secret-pw");
    assertThatThrownBy(() -> server.execute("CREATE TABLE broken ("))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("Syntax error");
    assertThat(server.description()).doesNotContain("secret-pw");
    assertThat(StoreConfig.server(http.url(), "u", "secret-pw").toString())
        .doesNotContain("secret-pw");
  }

  @Test
  void anUnreachableServerIsNamed() throws IOException {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    assertThatThrownBy(
            () ->
                JdbcClickHouse.open(
                    StoreConfig.server("http://127.0.0.1:" + closedPort, null, null)))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("127.0.0.1:" + closedPort);
  }

  @Test
  void servesCurlStyleRequests() throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    HttpResponse<String> ping =
        client.send(
            HttpRequest.newBuilder(URI.create(http.url() + "/ping")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(ping.body()).isEqualTo("Ok.\n");
    HttpResponse<String> query =
        client.send(
            HttpRequest.newBuilder(URI.create(http.url() + "/?default_format=JSONEachRow"))
                .POST(HttpRequest.BodyPublishers.ofString("SELECT 1 AS one"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(query.statusCode()).isEqualTo(200);
    assertThat(query.body()).isEqualTo("{\"one\":1}\n");
    assertThat(query.headers().firstValue("X-ClickHouse-Format")).hasValue("JSONEachRow");
    HttpResponse<String> bad =
        client.send(
            HttpRequest.newBuilder(URI.create(http.url() + "/"))
                .POST(HttpRequest.BodyPublishers.ofString("SELECT nope"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(bad.statusCode()).isEqualTo(404); // ClickHouse's status for UNKNOWN_IDENTIFIER
    assertThat(bad.headers().firstValue("X-ClickHouse-Exception-Code")).hasValue("47");
    assertThat(bad.body()).endsWith("(UNKNOWN_IDENTIFIER)\n");
    HttpResponse<byte[]> compressed =
        client.send(
            HttpRequest.newBuilder(URI.create(http.url() + "/?compress=1"))
                .POST(HttpRequest.BodyPublishers.ofString("SELECT 1"))
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertThat(compressed.statusCode()).isEqualTo(200);
    try (java.io.InputStream in =
        new com.clickhouse.data.stream.Lz4InputStream(
            new java.io.ByteArrayInputStream(compressed.body()))) {
      assertThat(in.readAllBytes())
          .isEqualTo("1\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
  }

  /**
   * Rows as the server sends them; closing early drops the reply and the server stops the query.
   */
  @Test
  void streamsRowsAsTheServerSendsThem() {
    RowStreams.behaves(server);
  }
}
