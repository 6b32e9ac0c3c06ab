package dev.llmlat.agent.it;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * An OpenAI-compatible upstream engine (no agent): answers {@code /v1/chat/completions} and {@code
 * /v1/completions}, streaming SSE when asked to, and records the {@code traceparent} it received,
 * when the request arrived, when it wrote its first chunk and when it began its last write (the
 * response's end: the connection is free for the gateway from then on), and the client's port
 * (which TCP connection carried it). Over HTTP, or HTTPS with a given server certificate; it can be
 * told to close each connection after its response (so a gateway's pool holds none afterwards). Its
 * streamed events can be made large (their content padded to a size), written back to back, for a
 * gateway whose client reads slowly.
 */
public final class FakeEngine implements AutoCloseable {
  /** What the engine saw of one request. */
  public record Received(
      String path,
      String traceparent,
      long firstWriteEpochNanos,
      long arrivalEpochNanos,
      long lastWriteEpochNanos,
      int remotePort) {
    public String traceId() {
      return traceparent == null ? null : traceparent.split("-")[1];
    }

    public String parentSpanId() {
      return traceparent == null ? null : traceparent.split("-")[2];
    }
  }

  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(8);
  private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
  private final int chunks;
  private final long prefillMillis;
  private final long gapMillis;

  /** Appended to each streamed event's content (empty unless asked for). */
  private final String padding;

  private final String scheme;
  private volatile boolean closeConnections;

  public FakeEngine(int chunks, long prefillMillis, long gapMillis) throws IOException {
    this(chunks, prefillMillis, gapMillis, null);
  }

  /** Over HTTPS with {@code tls}'s server certificate when it is not null. */
  public FakeEngine(int chunks, long prefillMillis, long gapMillis, SSLContext tls)
      throws IOException {
    this(chunks, prefillMillis, gapMillis, tls, 0);
  }

  /**
   * {@code chunks} events written back to back, each with {@code contentBytes} more bytes of
   * content (ASCII).
   */
  public static FakeEngine withLargeEvents(int chunks, int contentBytes) throws IOException {
    return new FakeEngine(chunks, 0, 0, null, contentBytes);
  }

  /** As {@link #withLargeEvents(int, int)}, {@code gapMillis} apart. */
  public static FakeEngine withLargeEvents(int chunks, int contentBytes, long gapMillis)
      throws IOException {
    return new FakeEngine(chunks, 0, gapMillis, null, contentBytes);
  }

  private FakeEngine(
      int chunks, long prefillMillis, long gapMillis, SSLContext tls, int contentBytes)
      throws IOException {
    this.chunks = chunks;
    this.prefillMillis = prefillMillis;
    this.gapMillis = gapMillis;
    this.padding = " ".repeat(contentBytes);
    InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    if (tls == null) {
      server = HttpServer.create(address, 128);
      scheme = "http";
    } else {
      HttpsServer https = HttpsServer.create(address, 128);
      https.setHttpsConfigurator(new HttpsConfigurator(tls));
      server = https;
      scheme = "https";
    }
    server.createContext("/v1/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  public String baseUrl() {
    return scheme + "://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Whether each response closes its connection ({@code Connection: close}). */
  public void closeConnections(boolean close) {
    closeConnections = close;
  }

  public Received take() throws InterruptedException {
    Received r = received.poll(30, TimeUnit.SECONDS);
    if (r == null) {
      throw new AssertionError("the engine received no request within 30 s");
    }
    return r;
  }

  public void clear() {
    received.clear();
  }

  private void handle(HttpExchange exchange) throws IOException {
    long arrival = epochNanos();
    try (exchange) {
      if (closeConnections) {
        exchange.getResponseHeaders().set("Connection", "close");
      }
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      String traceparent = exchange.getRequestHeaders().getFirst("traceparent");
      boolean stream = body.replace(" ", "").contains("\"stream\":true");
      sleep(prefillMillis);
      if (!stream) {
        byte[] json =
            "{\"id\":\"cmpl-1\",\"choices\":[{\"text\":\"hello\"}]}"
                .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        long first = epochNanos();
        exchange.sendResponseHeaders(200, json.length);
        long last = epochNanos(); // before the write: the gateway may have it as soon as it is done
        exchange.getResponseBody().write(json);
        received.add(
            new Received(
                exchange.getRequestURI().getPath(),
                traceparent,
                first,
                arrival,
                last,
                exchange.getRemoteAddress().getPort()));
        return;
      }
      exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
      exchange.sendResponseHeaders(200, 0);
      OutputStream out = exchange.getResponseBody();
      long first = 0;
      for (int i = 0; i < chunks; i++) {
        if (i > 0) {
          sleep(gapMillis);
        }
        if (i == 0) {
          first = epochNanos(); // before the write: the gateway cannot see the chunk earlier
        }
        out.write(
            ("data: {\"choices\":[{\"delta\":{\"content\":\"tok" + i + padding + "\"}}]}\n\n")
                .getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
      out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
      // before the close puts the chunked body's end on the wire: from then on the gateway may
      // reuse the connection, and its next request can arrive before close() has returned here
      long last = epochNanos();
      out.close();
      received.add(
          new Received(
              exchange.getRequestURI().getPath(),
              traceparent,
              first,
              arrival,
              last,
              exchange.getRemoteAddress().getPort()));
    }
  }

  static long epochNanos() {
    Instant now = Instant.now();
    return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
  }

  private static void sleep(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
