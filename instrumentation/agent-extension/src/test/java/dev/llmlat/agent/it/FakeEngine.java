package dev.llmlat.agent.it;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
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

/**
 * An OpenAI-compatible upstream engine (no agent): answers {@code /v1/chat/completions} and
 * {@code /v1/completions}, streaming SSE when asked to, and records the {@code traceparent} it
 * received and when it wrote its first chunk.
 */
public final class FakeEngine implements AutoCloseable {
  /** What the engine saw of one request. */
  public record Received(String path, String traceparent, long firstWriteEpochNanos) {
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

  public FakeEngine(int chunks, long prefillMillis, long gapMillis) throws IOException {
    this.chunks = chunks;
    this.prefillMillis = prefillMillis;
    this.gapMillis = gapMillis;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/v1/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
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
    try (exchange) {
      String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      String traceparent = exchange.getRequestHeaders().getFirst("traceparent");
      boolean stream = body.replace(" ", "").contains("\"stream\":true");
      sleep(prefillMillis);
      if (!stream) {
        byte[] json = "{\"id\":\"cmpl-1\",\"choices\":[{\"text\":\"hello\"}]}".getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        long first = epochNanos();
        exchange.sendResponseHeaders(200, json.length);
        exchange.getResponseBody().write(json);
        received.add(new Received(exchange.getRequestURI().getPath(), traceparent, first));
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
        out.write(("data: {\"choices\":[{\"delta\":{\"content\":\"tok" + i + "\"}}]}\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
      out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
      out.flush();
      received.add(new Received(exchange.getRequestURI().getPath(), traceparent, first));
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
