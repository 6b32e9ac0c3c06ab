package dev.llmlat.agent.gateway.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;

/**
 * The response as the application sees it: bytes or characters written are observed, and a flush
 * (of the stream, the writer or the buffer) or the close is when they go to the client.
 */
public final class ObservedServletResponse extends HttpServletResponseWrapper {
  private final GatewayExchange exchange;
  private ServletOutputStream out;
  private PrintWriter writer;

  ObservedServletResponse(HttpServletResponse response, GatewayExchange exchange) {
    super(response);
    this.exchange = exchange;
  }

  @Override
  public ServletOutputStream getOutputStream() throws IOException {
    if (out == null) {
      out = new ObservedServletOutputStream(super.getOutputStream(), this, exchange);
    }
    return out;
  }

  @Override
  public PrintWriter getWriter() throws IOException {
    if (writer == null) {
      writer = new PrintWriter(new ObservedWriter(super.getWriter(), this, exchange), false);
    }
    return writer;
  }

  @Override
  public void flushBuffer() throws IOException {
    long sendingAt = exchange.sendingAt();
    long start = System.nanoTime();
    super.flushBuffer();
    exchange.onBlockingWriteReturned(start);
    exchange.onResponseSent(sendingAt);
  }

  void containerSends() {
    exchange.onResponseSent(exchange.sendingAt());
  }

  /** Classifies the response at its first body write, when the application has set its headers. */
  void beforeBody() {
    if (!exchange.responseClassified()) {
      exchange.onResponseHeaders(getContentType(), !containsHeader("Content-Length"));
    }
  }
}
