package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slow and idle connections are cut, so that thousands of them cannot pile up: the headers must
 * arrive within the header timeout, a body may not pause longer than the receive timeout, and a
 * kept-alive connection waits for its next request no longer than the keep-alive timeout. The
 * timeout under test is short and the others are an hour, so that only the one under test can end
 * the connection: the test observes its effect (a 408, the connection closed), and a read's own
 * timeout only guards against a hang.
 */
class HttpTimeoutTest {
  private static final Duration SHORT = Duration.ofMillis(500);
  private static final Duration NEVER = Duration.ofHours(1);
  private static final int HANG_GUARD_MILLIS = 120_000;

  @TempDir Path dir;
  StoreFixture f;

  @AfterEach
  void stop() {
    if (f != null) {
      f.close();
    }
  }

  private StoreFixture start(Duration header, Duration keepAlive, Duration receive)
      throws IOException {
    f =
        new StoreFixture(
            dir, ServerConfig.loopbackWithoutPassword(0).withTimeouts(header, keepAlive, receive));
    return f;
  }

  private Socket connect() throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), f.server.port());
    s.setSoTimeout(
        HANG_GUARD_MILLIS); // a read that waits longer fails the test with SocketTimeoutException
    return s;
  }

  @Test
  void slowlorisTricklingHeadersIsCutAtTheHeaderTimeout() throws Exception {
    start(SHORT, NEVER, NEVER);
    try (Socket s = connect()) {
      OutputStream out = s.getOutputStream();
      out.write(
          "GET /ping HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
              .getBytes(StandardCharsets.ISO_8859_1));
      // one header byte every 50 ms: each read is quick, only the deadline for the whole head cuts
      // it
      Thread trickle =
          Thread.ofVirtual()
              .start(
                  () -> {
                    try {
                      while (true) {
                        out.write('a');
                        out.flush();
                        Thread.sleep(50);
                      }
                    } catch (IOException | InterruptedException e) {
                      // cut, as it should be
                    }
                  });
      try {
        String answer = readToEnd(s.getInputStream());
        assertThat(answer)
            .startsWith("HTTP/1.1 408 Request Timeout\r\n")
            .containsIgnoringCase("Connection: close\r\n");
      } finally {
        trickle.interrupt();
      }
    }
    assertPing();
  }

  @Test
  void connectionThatSendsNothingIsClosedAfterTheKeepAliveTimeout() throws Exception {
    start(NEVER, SHORT, NEVER);
    try (Socket s = connect()) {
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    }
    assertPing();
  }

  @Test
  void idleKeptAliveConnectionIsClosedAfterTheKeepAliveTimeout() throws Exception {
    start(NEVER, SHORT, NEVER);
    try (Socket s = connect()) {
      s.getOutputStream()
          .write(
              "GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n"
                  .getBytes(StandardCharsets.ISO_8859_1));
      InputStream in = s.getInputStream();
      String head = readHead(in);
      // HTTP/1.1 keeps the connection unless it says Connection: close; Keep-Alive says for how
      // long
      assertThat(head)
          .startsWith("HTTP/1.1 200 OK\r\n")
          .doesNotContainIgnoringCase("Connection: close")
          .contains("Keep-Alive: timeout=1\r\n");
      assertThat(new String(in.readNBytes(4), StandardCharsets.ISO_8859_1)).isEqualTo("Ok.\n");
      assertThat(in.read())
          .isEqualTo(-1); // closed by the server: nothing else would within the hour
    }
    assertPing();
  }

  @Test
  void bodyThatStallsIsCutAtTheReceiveTimeoutAndInsertsNothing() throws Exception {
    start(NEVER, NEVER, SHORT);
    assertThat(
            f.http.post("CREATE TABLE stalled (a UInt32) ENGINE = MergeTree ORDER BY a").status())
        .isEqualTo(200);
    try (Socket s = connect()) {
      s.getOutputStream()
          .write(
              ("POST /?query=INSERT%20INTO%20stalled%20FORMAT%20TSV HTTP/1.1\r\nHost: localhost\r\n"
                      + "Content-Length: 100\r\n\r\n1\n2\n")
                  .getBytes(StandardCharsets.ISO_8859_1));
      // and then nothing, with the connection open
      assertThat(readToEnd(s.getInputStream()))
          .startsWith("HTTP/1.1 408 Request Timeout\r\n")
          .contains("paused");
    }
    assertThat(f.http.post("SELECT count() FROM stalled").body()).isEqualTo("0\n");
    assertPing();
  }

  @Test
  void timeoutsMustBePositive() {
    ServerConfig config = ServerConfig.loopbackWithoutPassword(0);
    assertThat(config.headerTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.keepAliveTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(config.receiveTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThatThrownBy(() -> config.withTimeouts(Duration.ZERO, SHORT, SHORT))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> config.withTimeouts(SHORT, Duration.ofSeconds(-1), SHORT))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> config.withTimeouts(SHORT, SHORT, null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> config.withTimeouts(SHORT, SHORT, Duration.ofDays(365)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private void assertPing() throws IOException {
    try (Socket s = connect()) {
      String ping = "GET /ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
      s.getOutputStream().write(ping.getBytes(StandardCharsets.ISO_8859_1));
      assertThat(readToEnd(s.getInputStream()))
          .startsWith("HTTP/1.1 200 OK\r\n")
          .endsWith("\r\n\r\nOk.\n");
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      head.write(b);
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  private static String readToEnd(InputStream in) throws IOException {
    return HttpFramingTest.RawHttp.readToEnd(in);
  }
}
