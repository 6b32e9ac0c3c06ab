package dev.llmlat.agent.gatewayapp;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.util.concurrent.Executors;

/**
 * A minimal LLM gateway with no OpenTelemetry code: JDK {@code HttpServer} in, JDK {@code
 * HttpClient} out, relaying the engine's SSE stream event by event. Args: upstream base URL. Prints
 * {@code LISTENING <port>} once it serves.
 */
public final class JdkGatewayMain {
  private JdkGatewayMain() {}

  public static void main(String[] args) throws IOException {
    Upstream upstream = new Upstream(args[0]);
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/v1/", exchange -> relay(upstream, exchange));
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    System.out.println("LISTENING " + server.getAddress().getPort());
  }

  private static void relay(Upstream upstream, HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      HttpResponse<InputStream> response;
      try {
        response = upstream.forward(exchange.getRequestURI().getPath(), body);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        exchange.sendResponseHeaders(503, -1);
        return;
      }
      String contentType = Upstream.contentType(response);
      exchange.getResponseHeaders().set("Content-Type", contentType);
      try (InputStream in = response.body()) {
        if (!Upstream.isEventStream(contentType)) {
          byte[] all = in.readAllBytes();
          exchange.sendResponseHeaders(response.statusCode(), all.length);
          exchange.getResponseBody().write(all);
          return;
        }
        exchange.sendResponseHeaders(response.statusCode(), 0);
        OutputStream out = exchange.getResponseBody();
        byte[] buffer = new byte[8192];
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush();
        }
        out.close();
      }
    }
  }
}
