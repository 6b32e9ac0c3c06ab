package dev.llmlat.store.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A long query blocks nobody: /ping and other queries answer; a query is killed when its client
 * leaves or KILL QUERY names it.
 */
@Timeout(
    value = 5,
    unit =
        java.util.concurrent.TimeUnit
            .MINUTES) // against a hang only: every wait below is for a condition
class HttpConcurrencyTest {
  @TempDir Path dir;
  StoreFixture f;
  final ExecutorService background = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    background.shutdownNow();
    if (f != null) {
      f.close();
    }
  }

  private static final String RUNNING_LONG =
      "SELECT count() FROM system.processes WHERE query LIKE '%sipHash64%' AND query NOT LIKE '%system.processes%'";

  /**
   * Asks the engine until it runs {@code expected} long queries (each ask is a round trip: no
   * sleeping).
   */
  static void awaitRunningLong(Http http, String expected) throws Exception {
    while (!http.post(RUNNING_LONG).body().equals(expected + "\n")) {
      Thread.onSpinWait();
    }
  }

  /**
   * Until the server holds {@code queryId} as running: KILL ... TEST needs no turn and names it
   * once it has one.
   */
  static void awaitAdmitted(Http http, String queryId) throws Exception {
    while (http.post(
            Map.of("default_format", "TSV"), "KILL QUERY WHERE query_id = '" + queryId + "' TEST")
        .body()
        .isEmpty()) {
      Thread.onSpinWait();
    }
  }

  @Test
  void pingAndOtherQueriesAnswerWhileALongQueryRuns() throws Exception {
    f = new StoreFixture(dir);
    Http http = f.http;
    Future<Http.Reply> longOne =
        background.submit(() -> http.post(Map.of("query_id", "long-1"), StoreFixture.LONG_QUERY));
    awaitRunningLong(http, "1");

    Http.Reply ping = http.send("GET", Map.of(), Map.of(), null);
    assertThat(ping.body()).isEqualTo("Ok.\n");
    Http.Reply one = http.post("SELECT 1");
    assertThat(one.body()).isEqualTo("1\n");
    assertThat(longOne.isDone()).as("answered while the long query still runs").isFalse();

    // KILL QUERY by the id the client gave: the engine stops it, its client gets ClickHouse's error
    Http.Reply kill =
        http.post(Map.of("default_format", "TSV"), "KILL QUERY WHERE query_id = 'long-1' SYNC");
    assertThat(kill.status()).isEqualTo(200);
    assertThat(kill.body()).startsWith("finished\tlong-1\tdefault\tSELECT count()");
    Http.Reply killed = longOne.get();
    assertThat(killed.header("X-ClickHouse-Exception-Code")).isEqualTo("394");
    assertThat(killed.body()).contains("(QUERY_WAS_CANCELLED)");
    awaitRunningLong(http, "0");
  }

  @Test
  void aQueryWhoseClientWentAwayIsKilled() throws Exception {
    f = new StoreFixture(dir);
    URI uri = URI.create(f.server.url());
    try (Socket client = new Socket(uri.getHost(), uri.getPort())) {
      byte[] body = StoreFixture.LONG_QUERY.getBytes(StandardCharsets.UTF_8);
      OutputStream out = client.getOutputStream();
      out.write(
          ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + body.length + "\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      out.write(body);
      out.flush();
      awaitRunningLong(f.http, "1");
    } // the client hangs up
    awaitRunningLong(f.http, "0");
    // a streamed result is stopped too when its reader leaves
    try (Socket client = new Socket(uri.getHost(), uri.getPort())) {
      byte[] body =
          "SELECT number, sipHash64(number) FROM numbers(100000000000) SETTINGS max_block_size = 1000"
              .getBytes(StandardCharsets.UTF_8);
      OutputStream out = client.getOutputStream();
      out.write(
          ("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + body.length + "\r\n\r\n")
              .getBytes(StandardCharsets.ISO_8859_1));
      out.write(body);
      out.flush();
      assertThat(client.getInputStream().readNBytes(100_000))
          .hasSize(100_000); // rows arrive as they are made
      awaitRunningLong(f.http, "1");
    }
    awaitRunningLong(f.http, "0");
  }

  @Test
  void aSaturatedServerSays503AtOnceAndStillPings() throws Exception {
    // one turn, one place in the queue, and a queue timeout no test reaches
    f =
        new StoreFixture(
            dir, ServerConfig.loopbackWithoutPassword(0).withLimits(1, 1, Duration.ofHours(1)));
    Http http = f.http;
    Future<Http.Reply> longOne =
        background.submit(() -> http.post(Map.of("query_id", "long-2"), StoreFixture.LONG_QUERY));
    awaitAdmitted(http, "long-2");
    // of two more, one takes the place in the queue and the other is refused at once
    ExecutorCompletionService<Http.Reply> two = new ExecutorCompletionService<>(background);
    two.submit(() -> http.post("SELECT 2"));
    two.submit(() -> http.post("SELECT 2"));
    Http.Reply refused = two.take().get();
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.header("X-ClickHouse-Exception-Code")).isEqualTo("202");
    assertThat(refused.body())
        .contains("Maximum: 1 running and 1 waiting")
        .contains("(TOO_MANY_SIMULTANEOUS_QUERIES)");
    assertThat(longOne.isDone()).isFalse();
    assertThat(http.send("GET", Map.of(), Map.of(), null).body()).isEqualTo("Ok.\n");
    // KILL needs no turn; the query that waited runs once the turn is free
    assertThat(http.post("KILL QUERY WHERE query_id = 'long-2' SYNC").status()).isEqualTo(200);
    assertThat(longOne.get().status()).isEqualTo(500);
    assertThat(two.take().get().body()).isEqualTo("2\n");
    assertThat(http.post("SELECT 1").body()).isEqualTo("1\n");
  }

  @Test
  void aRunningQueryIdCannotBeReused() throws Exception {
    f = new StoreFixture(dir);
    Http http = f.http;
    Future<Http.Reply> longOne =
        background.submit(() -> http.post(Map.of("query_id", "same"), StoreFixture.LONG_QUERY));
    awaitRunningLong(http, "1");
    Http.Reply second = http.post(Map.of("query_id", "same"), "SELECT 1");
    assertThat(second.header("X-ClickHouse-Exception-Code")).isEqualTo("216");
    // replace_running_query=1 stops the first and runs the second, as ClickHouse does
    Http.Reply replaced =
        http.post(Map.of("query_id", "same", "replace_running_query", "1"), "SELECT 2");
    assertThat(replaced.body()).isEqualTo("2\n");
    assertThat(longOne.get().header("X-ClickHouse-Exception-Code")).isEqualTo("394");
  }

  @Test
  void killByAnEngineConditionStillWorks() throws Exception {
    f = new StoreFixture(dir);
    Http http = f.http;
    Future<Http.Reply> longOne = background.submit(() -> http.post(StoreFixture.LONG_QUERY));
    awaitRunningLong(http, "1");
    // SYNC would hang chDB 26.5; the front end asks the engine for ASYNC
    Http.Reply kill =
        http.post(
            "KILL QUERY WHERE query LIKE '%sipHash64(number) % 7%' AND query NOT LIKE '%KILL%' SYNC");
    assertThat(kill.status()).isEqualTo(200);
    assertThat(longOne.get().header("X-ClickHouse-Exception-Code")).isEqualTo("394");
  }
}
