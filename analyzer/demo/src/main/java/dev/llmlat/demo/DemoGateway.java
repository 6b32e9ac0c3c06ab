package dev.llmlat.demo;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Executors;

/**
 * The demo's API gateway: an ordinary OpenAI-compatible relay (JDK HttpServer in, JDK HttpClient
 * out, the engine's SSE stream passed through as it arrives) with no tracing code at all. The
 * demo runs it under the real OpenTelemetry agent and llmlat's extension, as a user would run
 * their gateway. Args: {@code UPSTREAM_BASE_URL}. Prints {@code LISTENING <port>} when ready.
 */
public final class DemoGateway {
  private DemoGateway() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: DemoGateway UPSTREAM_BASE_URL");
      System.exit(2);
    }
    String upstream = args[0];
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/v1/", exchange -> relay(client, upstream, exchange));
    server.setExecutor(Executors.newFixedThreadPool(32));
    server.start();
    System.out.println("LISTENING " + server.getAddress().getPort());
    System.out.flush();
  }

  private static void relay(HttpClient client, String upstream, HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      HttpRequest request = HttpRequest.newBuilder(URI.create(upstream + exchange.getRequestURI().getPath()))
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
      HttpResponse<InputStream> response;
      try {
        response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        exchange.sendResponseHeaders(503, -1);
        return;
      } catch (IOException e) {
        exchange.sendResponseHeaders(502, -1);
        return;
      }
      String type = response.headers().firstValue("Content-Type").orElse("application/json");
      exchange.getResponseHeaders().set("Content-Type", type);
      try (InputStream in = response.body()) {
        exchange.sendResponseHeaders(response.statusCode(), 0);
        OutputStream out = exchange.getResponseBody();
        byte[] buffer = new byte[8192];
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush(); // every SSE chunk goes out as soon as it arrives
        }
        out.close();
      }
    }
  }
}
