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
 * {@code send} is the moment bytes go to the network. A send completes (its callback) once Jetty
 * has written its bytes: at once when the socket (or on HTTP/2 the flow-control window) took them,
 * later when it had to wait for the client to take earlier ones; a send that took {@link
 * GatewayExchange#BLOCKED_WRITE_NANOS} or longer to complete is backpressure.
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
    exchange.backpressureObserved(); // every send's completion is timed
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
    super.send(request, response, last, content, new TimedSend(callback, exchange));
    exchange.onResponseSent(sendingAt);
  }

  /** The send's own callback, told how long the send took to complete. */
  private static final class TimedSend extends Callback.Nested {
    private final GatewayExchange exchange;
    private final long startNanoTime = System.nanoTime();

    TimedSend(Callback callback, GatewayExchange exchange) {
      super(callback);
      this.exchange = exchange;
    }

    @Override
    public void succeeded() {
      exchange.onBlockingWriteReturned(startNanoTime);
      super.succeeded();
    }

    @Override
    public void failed(Throwable failure) {
      exchange.onBlockingWriteReturned(startNanoTime);
      super.failed(failure);
    }
  }
}
