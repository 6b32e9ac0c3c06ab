package dev.llmlat.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPInputStream;

/**
 * An OTLP/HTTP trace receiver ({@code POST /v1/traces}, protobuf) that decodes and counts what it
 * is sent: the live endpoint the vanilla agent's default exporter delivers to in {@link
 * AgentBenchmark}, so that mode pays for real export like the Kafka mode does.
 */
final class OtlpReceiver implements AutoCloseable {
  private final HttpServer server;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong spans = new AtomicLong();

  private OtlpReceiver(HttpServer server) {
    this.server = server;
  }

  static OtlpReceiver start() throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    OtlpReceiver receiver = new OtlpReceiver(server);
    server.createContext("/v1/traces", receiver::handle);
    server.setExecutor(
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "otlp-receiver");
              t.setDaemon(true);
              return t;
            }));
    server.start();
    return receiver;
  }

  /** The base URL for {@code otel.exporter.otlp.endpoint}. */
  String endpoint() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  long requests() {
    return requests.get();
  }

  long spans() {
    return spans.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"POST".equals(exchange.getRequestMethod())) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      ExportTraceServiceRequest request;
      try (InputStream body =
          "gzip".equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))
              ? new GZIPInputStream(exchange.getRequestBody())
              : exchange.getRequestBody()) {
        request = ExportTraceServiceRequest.parseFrom(body);
      } catch (IOException e) {
        exchange.sendResponseHeaders(400, -1);
        return;
      }
      long n = 0;
      for (ResourceSpans rs : request.getResourceSpansList()) {
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          n += ss.getSpansCount();
        }
      }
      requests.incrementAndGet();
      spans.addAndGet(n);
      byte[] response = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
      exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
      exchange.sendResponseHeaders(200, response.length == 0 ? -1 : response.length);
      exchange.getResponseBody().write(response);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
