package dev.llmlat.demo;

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
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;

/**
 * The demo's API gateway: an ordinary OpenAI-compatible relay (JDK HttpServer in, Apache HttpClient
 * 5 out with a small connection pool, the engine's SSE stream passed through as it arrives) with no
 * tracing code at all. The demo runs it under the real OpenTelemetry agent and llmlat's extension,
 * as a user would run their gateway; with more streams than pooled connections, requests wait for
 * one, as behind a real gateway. Args: {@code UPSTREAM_BASE_URL POOL_SIZE}. Prints {@code LISTENING
 * <port>} when ready.
 */
public final class DemoGateway {
  private DemoGateway() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2 || !args[1].matches("[1-9][0-9]{0,3}")) {
      System.err.println("usage: DemoGateway UPSTREAM_BASE_URL POOL_SIZE (1..9999)");
      System.exit(2);
    }
    String upstream = args[0];
    int poolSize = Integer.parseInt(args[1]);
    PoolingHttpClientConnectionManager pool =
        PoolingHttpClientConnectionManagerBuilder.create()
            .setMaxConnPerRoute(poolSize)
            .setMaxConnTotal(poolSize)
            .build();
    CloseableHttpClient client = HttpClients.custom().setConnectionManager(pool).build();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/v1/", exchange -> relay(client, upstream, exchange));
    server.setExecutor(Executors.newFixedThreadPool(32));
    server.start();
    System.out.println("LISTENING " + server.getAddress().getPort());
    System.out.flush();
  }

  private static void relay(CloseableHttpClient client, String upstream, HttpExchange exchange)
      throws IOException {
    try (exchange) {
      HttpPost post = new HttpPost(upstream + exchange.getRequestURI().getPath());
      post.setEntity(
          new ByteArrayEntity(
              exchange.getRequestBody().readAllBytes(), ContentType.APPLICATION_JSON));
      try {
        client.execute(
            post,
            response -> {
              HttpEntity entity = response.getEntity();
              String type =
                  entity == null || entity.getContentType() == null
                      ? "application/json"
                      : entity.getContentType();
              exchange.getResponseHeaders().set("Content-Type", type);
              if (entity == null) {
                exchange.sendResponseHeaders(response.getCode(), -1);
                return null;
              }
              try (InputStream in = entity.getContent()) {
                exchange.sendResponseHeaders(response.getCode(), 0);
                OutputStream out = exchange.getResponseBody();
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                  out.write(buffer, 0, n);
                  out.flush(); // every SSE chunk goes out as soon as it arrives
                }
                out.close();
              }
              return null;
            });
      } catch (IOException e) {
        exchange.sendResponseHeaders(
            502, -1); // the engine unreachable: nothing was sent to the client yet
      }
    }
  }
}
