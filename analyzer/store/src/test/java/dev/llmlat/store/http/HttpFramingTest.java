package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Request framing that two HTTP parsers could read differently (the stuff of request smuggling) is
 * answered 400 and the connection closed; a body that ends early never reaches the engine. Raw
 * sockets: an HTTP client library would not send any of this.
 */
class HttpFramingTest {
  @TempDir static Path dir;
  static StoreFixture f;

  @BeforeAll
  static void start() throws IOException {
    f = new StoreFixture(dir);
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  @AfterEach
  void serverStillAnswers() throws IOException {
    assertThat(
            RawHttp.exchange(
                f.server.port(),
                "GET /ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                false))
        .startsWith("HTTP/1.1 200 OK\r\n")
        .endsWith("\r\n\r\nOk.\n");
  }

  /**
   * A POST of {@code body} with the given framing headers; Connection: close so any answer ends the
   * exchange.
   */
  private static String post(String path, String headers, String body, boolean halfClose)
      throws IOException {
    return RawHttp.exchange(
        f.server.port(),
        "POST "
            + path
            + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
            + headers
            + "\r\n"
            + body,
        halfClose);
  }

  private static void assertRefused(String response, String reason) {
    assertThat(response)
        .startsWith("HTTP/1.1 400 Bad Request\r\n")
        .containsIgnoringCase("Connection: close\r\n")
        .contains("Content-Type: text/plain")
        .contains(reason);
  }

  @Test
  void conflictingContentLengthsAreRefused() throws IOException {
    assertRefused(
        post("/", "Content-Length: 8\r\nContent-Length: 9\r\n", "SELECT 1", false),
        "Multiple Content-Lengths");
    assertRefused(
        post("/", "Content-Length: 8, 9\r\n", "SELECT 1", false), "Invalid Content-Length");
  }

  @Test
  void identicalContentLengthHeadersFold() throws IOException {
    // RFC 9110 §8.6: the framing is the same whichever a proxy picks, so they are one
    assertThat(post("/", "Content-Length: 8\r\nContent-Length: 8\r\n", "SELECT 1", false))
        .startsWith("HTTP/1.1 200 OK")
        .endsWith("\r\n\r\n1\n");
    // a list in one header is not read at all (Jetty's parser): refusing is as safe as folding
    assertRefused(
        post("/", "Content-Length: 8, 8\r\n", "SELECT 1", false), "Invalid Content-Length");
  }

  @ParameterizedTest
  @ValueSource(strings = {"-8", "+8", "8x", "0x8", "", "99999999999999999999"})
  void malformedContentLengthIsRefused(String value) throws IOException {
    assertRefused(post("/", "Content-Length: " + value + "\r\n", "SELECT 1", false), "Bad Request");
  }

  @Test
  void contentLengthWithChunkedIsRefused() throws IOException {
    // RFC 9112 §6.3: the classic smuggling pair; a proxy honouring Content-Length would see
    // "8\r\nS"
    assertRefused(
        post(
            "/",
            "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
            "8\r\nSELECT 1\r\n0\r\n\r\n",
            false),
        "Transfer-Encoding and Content-Length");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"gzip", "gzip, chunked", "chunked, chunked", "identity", "chunked, identity"})
  void transferEncodingOtherThanChunkedIsRefused(String coding) throws IOException {
    // Jetty's parser refuses most; "gzip, chunked", which it would read as chunked, the store
    // refuses
    assertRefused(
        post("/ping", "Transfer-Encoding: " + coding + "\r\n", "0\r\n\r\n", false),
        "Transfer-Encoding");
  }

  @Test
  void whitespaceBeforeAHeadersColonIsRefused() throws IOException {
    assertRefused(post("/", "Content-Length : 8\r\n", "SELECT 1", false), "Illegal character");
    assertRefused(post("/", "X-A: 1\r\n Transfer-Encoding: chunked\r\n", "", false), "Bad Request");
  }

  @ParameterizedTest
  @ValueSource(strings = {"zz", "+8", " 8", "8 8", "0x8", "10000000000000000"})
  void badChunkSizeIsRefused(String size) throws IOException {
    assertRefused(
        post("/", "Transfer-Encoding: chunked\r\n", size + "\r\nSELECT 1\r\n0\r\n\r\n", false),
        "chunked request body broke off after 0 bytes");
  }

  @Test
  void chunkSizeWithWhitespaceBeforeAnExtensionIsRead() throws IOException {
    assertThat(
            post("/", "Transfer-Encoding: chunked\r\n", "8 ;ext=1\r\nSELECT 1\r\n0\r\n\r\n", false))
        .startsWith("HTTP/1.1 200 OK")
        .endsWith("\r\n\r\n1\n");
  }

  @Test
  void chunkDataNotFollowedByCrlfIsRefused() throws IOException {
    // the size says 5, the data is 8: "T 1" must not be skipped as if it were the line end
    assertRefused(
        post("/", "Transfer-Encoding: chunked\r\n", "5\r\nSELECT 1\r\n0\r\n\r\n", false),
        "chunked request body broke off");
  }

  @Test
  void longChunkExtensionsAreSkipped() throws IOException {
    // Jetty's parser skips extensions as it reads them, holding none: the chunk's data is what its
    // size says
    String extension = ";x=" + "a".repeat(8000);
    assertThat(
            post(
                "/",
                "Transfer-Encoding: chunked\r\n",
                "8" + extension + "\r\nSELECT 1\r\n0\r\n\r\n",
                false))
        .startsWith("HTTP/1.1 200 OK")
        .endsWith("\r\n\r\n1\n");
  }

  @Test
  void bodyShorterThanItsContentLengthIsRefusedAndInsertsNothing() throws Exception {
    assertThat(
            f.http
                .post("CREATE TABLE short_fixed (a UInt32) ENGINE = MergeTree ORDER BY a")
                .status())
        .isEqualTo(200);
    // the data after ?query=, and statement and data in the body: both staged to a file first
    assertRefused(
        post(
            "/?query=INSERT%20INTO%20short_fixed%20FORMAT%20TSV",
            "Content-Length: 100\r\n", "1\n2\n3\n", true),
        "ended after 6 of the 100 bytes");
    assertRefused(
        post("/", "Content-Length: 100\r\n", "INSERT INTO short_fixed FORMAT TSV\n1\n2\n", true),
        "of the 100 bytes");
    assertThat(f.http.post("SELECT count() FROM short_fixed").body()).isEqualTo("0\n");
    assertThat(dir.resolve("tmp-inserts")).isEmptyDirectory(); // no staging file is left behind
  }

  @Test
  void chunkedBodyCutShortIsRefusedAndInsertsNothing() throws Exception {
    assertThat(
            f.http
                .post("CREATE TABLE short_chunked (a UInt32) ENGINE = MergeTree ORDER BY a")
                .status())
        .isEqualTo(200);
    String insert = "/?query=INSERT%20INTO%20short_chunked%20FORMAT%20TSV";
    // in the middle of a chunk, and after a whole chunk without the last one
    assertRefused(
        post(insert, "Transfer-Encoding: chunked\r\n", "4\r\n1\n2\n\r\n10\r\n3\n", true),
        "broke off after 6 bytes");
    assertRefused(
        post(insert, "Transfer-Encoding: chunked\r\n", "4\r\n1\n2\n\r\n", true),
        "broke off after 4 bytes");
    assertThat(f.http.post("SELECT count() FROM short_chunked").body()).isEqualTo("0\n");
    // the same body, whole, is inserted: what failed above was only the framing
    assertThat(
            post(
                insert,
                "Transfer-Encoding: chunked\r\n",
                "4\r\n1\n2\n\r\n2\r\n3\n\r\n0\r\n\r\n",
                false))
        .startsWith("HTTP/1.1 200 OK");
    assertThat(f.http.post("SELECT count() FROM short_chunked").body()).isEqualTo("3\n");
  }

  /**
   * One request written on a fresh connection, and everything the server answers until it closes.
   */
  static final class RawHttp {
    private RawHttp() {}

    /**
     * {@code halfClose}: the client closes its sending side after the request, as one that gave up
     * would.
     */
    static String exchange(int port, String request, boolean halfClose) throws IOException {
      try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
        s.setSoTimeout(30_000);
        s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
        s.getOutputStream().flush();
        if (halfClose) {
          s.shutdownOutput();
        }
        return readToEnd(s.getInputStream());
      }
    }

    static String readToEnd(InputStream in) throws IOException {
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      byte[] b = new byte[8192];
      int n;
      while ((n = in.read(b)) >= 0) {
        all.write(b, 0, n);
      }
      return all.toString(StandardCharsets.ISO_8859_1);
    }
  }
}
