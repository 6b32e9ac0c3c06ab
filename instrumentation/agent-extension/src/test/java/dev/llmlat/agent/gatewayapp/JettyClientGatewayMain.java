package dev.llmlat.agent.gatewayapp;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;

/**
 * The gateway with Jetty 12's {@code HttpClient} out: JDK {@code HttpServer} in, the engine's SSE
 * stream relayed as the client's input stream yields it. Args: upstream base URL, optionally the
 * most connections to it (Jetty's default otherwise). Prints {@code LISTENING <port>}.
 */
public final class JettyClientGatewayMain {
  private JettyClientGatewayMain() {}

  public static void main(String[] args) throws Exception {
    String upstream = args[0];
    HttpClient client = new HttpClient();
    if (args.length > 1) {
      client.setMaxConnectionsPerDestination(Integer.parseInt(args[1]));
    }
    client.start();
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    server.createContext("/v1/", exchange -> relay(client, upstream, exchange));
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    System.out.println("LISTENING " + server.getAddress().getPort());
  }

  private static void relay(HttpClient client, String upstream, HttpExchange exchange)
      throws IOException {
    try (exchange) {
      byte[] body = exchange.getRequestBody().readAllBytes();
      InputStreamResponseListener listener = new InputStreamResponseListener();
      client
          .newRequest(upstream + exchange.getRequestURI().getPath())
          .method(HttpMethod.POST)
          .body(new BytesRequestContent("application/json", body))
          .timeout(30, TimeUnit.SECONDS)
          .send(listener);
      Response response = listener.get(30, TimeUnit.SECONDS);
      String contentType = response.getHeaders().get(HttpHeader.CONTENT_TYPE);
      contentType = contentType == null ? "application/json" : contentType;
      exchange.getResponseHeaders().set("Content-Type", contentType);
      try (InputStream in = listener.getInputStream()) {
        if (!Upstream.isEventStream(contentType)) {
          byte[] all = in.readAllBytes();
          exchange.sendResponseHeaders(response.getStatus(), all.length);
          exchange.getResponseBody().write(all);
          return;
        }
        exchange.sendResponseHeaders(response.getStatus(), 0);
        OutputStream out = exchange.getResponseBody();
        byte[] buffer = new byte[8192];
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush();
        }
        out.close();
      }
    } catch (Exception e) {
      throw new IOException("relay failed", e);
    }
  }
}
