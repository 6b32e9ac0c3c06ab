package dev.llmlat.agent.gatewayapp;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;

/**
 * The gateway with Apache HttpClient 5 (classic I/O) out: JDK {@code HttpServer} in, the engine's
 * SSE stream relayed from the response entity as it is read, inside the client's response handler.
 * Args: upstream base URL, optionally the most connections to it (the client's default otherwise).
 * TLS trust from the {@code javax.net.ssl.*} system properties. Prints {@code LISTENING <port>}.
 */
public final class ApacheGatewayMain {
  private ApacheGatewayMain() {}

  public static void main(String[] args) throws IOException {
    String upstream = args[0];
    PoolingHttpClientConnectionManagerBuilder pool =
        PoolingHttpClientConnectionManagerBuilder.create().useSystemProperties();
    if (args.length > 1) {
      int max = Integer.parseInt(args[1]);
      pool.setMaxConnPerRoute(max).setMaxConnTotal(max);
    }
    CloseableHttpClient client =
        HttpClients.custom().useSystemProperties().setConnectionManager(pool.build()).build();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/v1/", exchange -> relay(client, upstream, exchange));
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    System.out.println("LISTENING " + server.getAddress().getPort());
  }

  private static void relay(CloseableHttpClient client, String upstream, HttpExchange exchange)
      throws IOException {
    try (exchange) {
      HttpPost post = new HttpPost(upstream + exchange.getRequestURI().getPath());
      post.setEntity(
          new ByteArrayEntity(
              exchange.getRequestBody().readAllBytes(), ContentType.APPLICATION_JSON));
      client.execute(
          post,
          response -> {
            HttpEntity entity = response.getEntity();
            String contentType =
                entity.getContentType() == null ? "application/json" : entity.getContentType();
            exchange.getResponseHeaders().set("Content-Type", contentType);
            try (InputStream in = entity.getContent()) {
              if (!Upstream.isEventStream(contentType)) {
                byte[] all = in.readAllBytes();
                exchange.sendResponseHeaders(response.getCode(), all.length);
                exchange.getResponseBody().write(all);
                return null;
              }
              exchange.sendResponseHeaders(response.getCode(), 0);
              OutputStream out = exchange.getResponseBody();
              byte[] buffer = new byte[8192];
              for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, n);
                out.flush();
              }
              out.close();
            }
            return null;
          });
    }
  }
}
