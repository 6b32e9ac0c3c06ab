package dev.llmlat.agent.gateway.internal;

import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.Callback;

/**
 * Wraps Jetty 12's per-request {@link HttpStream}, the layer every handler style (core handlers,
 * servlets, websockets aside) reads request content from and sends response content through, so a
 * {@code send} is the moment bytes go to the network.
 */
public final class JettyGatewayStream extends HttpStream.Wrapper {
  private final GatewayExchange exchange;

  private JettyGatewayStream(HttpStream wrapped, GatewayExchange exchange) {
    super(wrapped);
    this.exchange = exchange;
  }

  /** Called as Jetty's {@code Server.handle} starts: observes OpenAI-style requests only. */
  public static void install(Request request) {
    if (request == null || !"POST".equalsIgnoreCase(request.getMethod())) {
      return;
    }
    OpenAiEndpoint endpoint = OpenAiEndpoint.forPath(request.getHttpURI().getPath());
    if (endpoint == null) {
      return;
    }
    GatewayExchange exchange = new GatewayExchange(endpoint, request.getHeaders()::get);
    request.addHttpStreamWrapper(stream -> new JettyGatewayStream(stream, exchange));
  }

  @Override
  public Content.Chunk read() {
    Content.Chunk chunk = super.read();
    if (chunk != null && !Content.Chunk.isFailure(chunk)) {
      ByteBuffer bytes = chunk.getByteBuffer();
      if (bytes != null && bytes.hasRemaining()) {
        exchange.onRequestBytes(bytes);
      }
    }
    return chunk;
  }

  @Override
  public void send(
      MetaData.Request request,
      MetaData.Response response,
      boolean last,
      ByteBuffer content,
      Callback callback) {
    if (response != null && !exchange.responseClassified()) {
      boolean singleWrite = last && content != null;
      exchange.onResponseHeaders(
          response.getHttpFields().get(HttpHeader.CONTENT_TYPE),
          response.getContentLength() < 0 && !singleWrite);
    }
    if (content != null && content.hasRemaining()) {
      exchange.onResponseBytes(content);
    }
    long sendingAt = exchange.sendingAt();
    super.send(request, response, last, content, callback);
    exchange.onResponseSent(sendingAt);
  }
}
