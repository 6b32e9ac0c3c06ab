package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.clickhouse.data.stream.Lz4InputStream;
import com.clickhouse.data.stream.Lz4OutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * ClickHouse's statuses, error texts and headers; compressed requests and answers; large bodies
 * streamed.
 */
class HttpProtocolTest {
  @TempDir Path dir;
  StoreFixture f;
  Http http;

  @BeforeEach
  void start() throws Exception {
    f = new StoreFixture(dir);
    http = f.http;
  }

  @AfterEach
  void stop() {
    f.close();
  }

  @Test
  void errorsCarryClickHousesStatusCodeAndName() throws Exception {
    Http.Reply syntax = http.post("SELEC 1");
    assertThat(syntax.status()).isEqualTo(400);
    assertThat(syntax.header("X-ClickHouse-Exception-Code")).isEqualTo("62");
    assertThat(syntax.body())
        .startsWith("Code: 62. DB::Exception: Syntax error")
        .endsWith("(SYNTAX_ERROR)\n");

    Http.Reply table = http.post("SELECT * FROM missing");
    assertThat(table.status()).isEqualTo(404);
    assertThat(table.header("X-ClickHouse-Exception-Code")).isEqualTo("60");
    assertThat(table.body()).contains("(UNKNOWN_TABLE)");

    Http.Reply multi = http.post("SELECT 1; SELECT 2");
    assertThat(multi.status()).isEqualTo(400);
    assertThat(multi.body())
        .isEqualTo("Code: 62. DB::Exception: Multi-statements are not allowed. (SYNTAX_ERROR)\n");
    // a semicolon in a string or comment is not a second statement
    assertThat(http.post("SELECT 'a;b' -- ; x\n;").body()).isEqualTo("a;b\n");

    Http.Reply empty = http.post("");
    assertThat(empty.status()).isEqualTo(400);
    assertThat(empty.body()).contains("Empty query");

    Http.Reply throwing = http.post("SELECT throwIf(1)");
    assertThat(throwing.status()).isEqualTo(500);
    assertThat(throwing.body()).contains("(FUNCTION_THROW_IF_VALUE_IS_NON_ZERO)");
  }

  @Test
  void headersSayFormatQueryIdAndSummary() throws Exception {
    Http.Reply r =
        http.post(
            Map.of("query_id", "my-id", "default_format", "TSV"),
            "SELECT number FROM numbers(10) FORMAT JSONEachRow");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.header("X-ClickHouse-Format")).isEqualTo("JSONEachRow");
    assertThat(r.header("X-ClickHouse-Query-Id")).isEqualTo("my-id");
    assertThat(r.header("X-ClickHouse-Timezone")).isNotBlank();
    assertThat(r.header("X-ClickHouse-Summary"))
        .contains("\"read_rows\":\"10\"")
        .contains("\"result_rows\":\"10\"");
    assertThat(r.header("Content-Type")).startsWith("application/x-ndjson");
    assertThat(r.body()).startsWith("{\"number\":0}\n");
    Http.Reply generated = http.post("SELECT 1");
    assertThat(generated.header("X-ClickHouse-Query-Id")).matches("[0-9a-f-]{36}");
    assertThat(generated.header("X-ClickHouse-Format")).isEqualTo("TabSeparated");
    Http.Reply header =
        http.send(
            "POST",
            Map.of(),
            Map.of("X-ClickHouse-Format", "CSV"),
            "SELECT 1, 'a'".getBytes(StandardCharsets.UTF_8));
    assertThat(header.body()).isEqualTo("1,\"a\"\n");
    assertThat(http.post("CREATE TABLE w (a UInt32) ENGINE = MergeTree ORDER BY a").status())
        .isEqualTo(200);
    Http.Reply insert = http.post("INSERT INTO w SELECT number FROM numbers(5)");
    assertThat(insert.header("X-ClickHouse-Summary")).contains("\"written_rows\":\"5\"");
  }

  @Test
  void compressedRequestsAndAnswers() throws Exception {
    assertThat(
            http.post("CREATE TABLE c (a UInt32, s String) ENGINE = MergeTree ORDER BY a").status())
        .isEqualTo(200);
    StringBuilder tsv = new StringBuilder();
    for (int i = 0; i < 1000; i++) {
      tsv.append(i).append('\t').append("row ").append(i).append('\n');
    }
    Http.Reply gz =
        http.send(
            "POST",
            Map.of("query", "INSERT INTO c FORMAT TSV"),
            Map.of("Content-Encoding", "gzip"),
            gzip(tsv.toString().getBytes(StandardCharsets.UTF_8)));
    assertThat(gz.status()).as(gz.body()).isEqualTo(200);
    assertThat(http.post("SELECT count(), sum(a) FROM c").body()).isEqualTo("1000\t499500\n");

    // the answer compressed when asked, as ClickHouse does: enable_http_compression=1 and
    // Accept-Encoding
    Http.Reply answer =
        http.send(
            "POST",
            Map.of("enable_http_compression", "1"),
            Map.of("Accept-Encoding", "gzip"),
            "SELECT s FROM c ORDER BY a".getBytes(StandardCharsets.UTF_8));
    assertThat(answer.header("Content-Encoding")).isEqualTo("gzip");
    String text =
        new String(
            new GZIPInputStream(new ByteArrayInputStream(answer.bytes())).readAllBytes(),
            StandardCharsets.UTF_8);
    assertThat(text).startsWith("row 0\nrow 1\n").endsWith("row 999\n");
    // without enable_http_compression the answer is plain
    Http.Reply plain =
        http.send(
            "POST",
            Map.of(),
            Map.of("Accept-Encoding", "gzip"),
            "SELECT 1".getBytes(StandardCharsets.UTF_8));
    assertThat(plain.header("Content-Encoding")).isNull();
    assertThat(plain.body()).isEqualTo("1\n");

    if (Codecs.zstdAvailable()) {
      Http.Reply z =
          http.send(
              "POST",
              Map.of("enable_http_compression", "1"),
              Map.of("Accept-Encoding", "zstd"),
              "SELECT count() FROM c".getBytes(StandardCharsets.UTF_8));
      assertThat(z.header("Content-Encoding")).isEqualTo("zstd");
      assertThat(z.bytes()).isNotEqualTo("1000\n".getBytes(StandardCharsets.UTF_8));
    }

    // ClickHouse's own block compression: decompress=1 on the request, compress=1 on the answer
    ByteArrayOutputStream lz4 = new ByteArrayOutputStream();
    try (OutputStream out = new Lz4OutputStream(lz4, 1 << 16, null)) {
      out.write("1000\tlz4 row\n".getBytes(StandardCharsets.UTF_8));
    }
    Http.Reply native4 =
        http.send(
            "POST",
            Map.of("query", "INSERT INTO c FORMAT TSV", "decompress", "1"),
            Map.of(),
            lz4.toByteArray());
    assertThat(native4.status()).as(native4.body()).isEqualTo(200);
    Http.Reply compressed = http.post(Map.of("compress", "1"), "SELECT s FROM c WHERE a = 1000");
    try (InputStream in = new Lz4InputStream(new ByteArrayInputStream(compressed.bytes()))) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("lz4 row\n");
    }

    Http.Reply unknown =
        http.send(
            "POST",
            Map.of(),
            Map.of("Content-Encoding", "snappy-x"),
            "SELECT 1".getBytes(StandardCharsets.UTF_8));
    assertThat(unknown.header("X-ClickHouse-Exception-Code")).isEqualTo("89");
  }

  @Test
  void largeResultsStreamWithOneHeaderAndLargeInsertsGoThroughAFile() throws Exception {
    Http.Reply big =
        http.post("SELECT number FROM numbers(3000000) SETTINGS max_block_size = 65536");
    assertThat(big.header("Content-Length")).isNull(); // streamed as the engine makes it
    String[] lines = big.body().split("\n");
    assertThat(lines).hasSize(3_000_000);
    assertThat(lines[2_999_999]).isEqualTo("2999999");

    Http.Reply named =
        http.post(
            Map.of("default_format", "TSVWithNamesAndTypes"),
            "SELECT number AS n FROM numbers(300000) SETTINGS max_block_size = 10000");
    String[] rows = named.body().split("\n");
    assertThat(rows).hasSize(300_002);
    assertThat(rows[0]).isEqualTo("n");
    assertThat(rows[1]).isEqualTo("UInt64");
    assertThat(rows[2]).isEqualTo("0");
    assertThat(rows[300_001]).isEqualTo("299999");

    // an empty result still has its header
    Http.Reply none =
        http.post(
            Map.of("default_format", "TSVWithNames"),
            "SELECT number AS n FROM numbers(10) WHERE n > 100");
    assertThat(none.body()).isEqualTo("n\n");
    // blocks without rows in the middle do not end the result
    Http.Reply sparse =
        http.post(
            "SELECT number FROM numbers(1000000) WHERE number % 300000 = 0 SETTINGS max_block_size = 1000");
    assertThat(sparse.body()).isEqualTo("0\n300000\n600000\n900000\n");

    assertThat(
            http.post("CREATE TABLE big (a UInt64, s String) ENGINE = MergeTree ORDER BY a")
                .status())
        .isEqualTo(200);
    StringBuilder data = new StringBuilder("INSERT INTO big FORMAT TSV\n");
    for (int i = 0; i < 200_000; i++) {
      data.append(i).append("\tvalue;with 'quotes' and ; semicolons ").append(i).append('\n');
    }
    Http.Reply inline =
        http.post(data.toString()); // curl --data-binary @file: statement and data in the body
    assertThat(inline.status()).as(inline.body()).isEqualTo(200);
    assertThat(http.post("SELECT count(), max(a) FROM big").body()).isEqualTo("200000\t199999\n");
    assertThat(
            http.post(Map.of("query", "INSERT INTO big (a, s) FORMAT CSV"), "1,\"x\"\n2,\"y\"\n")
                .status())
        .isEqualTo(200);
    assertThat(http.post(Map.of("query", "INSERT INTO big VALUES"), "(3, 'z')").status())
        .isEqualTo(200);
    assertThat(http.post("SELECT count() FROM big").body()).isEqualTo("200003\n");
    // an INSERT without data never makes the engine wait for data on its own stdin
    assertThat(http.post("INSERT INTO big FORMAT TSV").status()).isEqualTo(200);
    assertThat(http.post(Map.of("query", "INSERT INTO big FORMAT TSV"), "").status())
        .isEqualTo(200);
    Http.Reply noValues = http.post("INSERT INTO big VALUES");
    assertThat(noValues.header("X-ClickHouse-Exception-Code")).isEqualTo("108");
    assertThat(http.post("SELECT count() FROM big").body()).isEqualTo("200003\n");
    assertThat(dir.resolve("tmp-inserts")).isEmptyDirectory(); // staging files are removed
  }

  private static byte[] gzip(byte[] data) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(data);
    }
    return out.toByteArray();
  }
}
