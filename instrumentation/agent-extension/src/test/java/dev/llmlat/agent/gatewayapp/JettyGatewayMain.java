package dev.llmlat.agent.gatewayapp;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The same gateway on Jetty 12 (core handler API): relays the engine's SSE stream through Jetty's
 * response output stream. Args: upstream base URL. Prints {@code LISTENING <port>}.
 */
public final class JettyGatewayMain {
  private JettyGatewayMain() {}

  public static void main(String[] args) throws Exception {
    Upstream upstream = new Upstream(args[0]);
    QueuedThreadPool threads = new QueuedThreadPool(32, 4);
    Server server = new Server(threads);
    ServerConnector connector = new ServerConnector(server, 1, 1);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback)
              throws Exception {
            relay(upstream, request, response, callback);
            return true;
          }
        });
    server.start();
    System.out.println("LISTENING " + connector.getLocalPort());
    server.join();
  }

  private static void relay(
      Upstream upstream, Request request, Response response, Callback callback) throws Exception {
    byte[] body;
    try (InputStream in = Content.Source.asInputStream(request)) {
      body = in.readAllBytes();
    }
    HttpResponse<InputStream> upstreamResponse =
        upstream.forward(request.getHttpURI().getPath(), body);
    String contentType = Upstream.contentType(upstreamResponse);
    response.setStatus(upstreamResponse.statusCode());
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    try (InputStream in = upstreamResponse.body()) {
      if (!Upstream.isEventStream(contentType)) {
        byte[] all = in.readAllBytes();
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, all.length);
        response.write(true, ByteBuffer.wrap(all), callback);
        return;
      }
      try (OutputStream out = Content.Sink.asOutputStream(response)) {
        byte[] buffer = new byte[8192];
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush();
        }
      }
      callback.succeeded();
    } catch (Exception e) {
      callback.failed(e);
    }
  }
}
