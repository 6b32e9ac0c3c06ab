package dev.llmlat.agent.gateway.internal;

import com.sun.net.httpserver.HttpExchange;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Passes the response body through unchanged. The JDK server buffers chunked bodies until a flush,
 * so a flush (or the close) is when bytes reach the client.
 */
final class JdkObservedResponseBody extends FilterOutputStream {
  private final HttpExchange httpExchange;
  private final GatewayExchange exchange;

  JdkObservedResponseBody(OutputStream out, HttpExchange httpExchange, GatewayExchange exchange) {
    super(out);
    this.httpExchange = httpExchange;
    this.exchange = exchange;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] bytes, int offset, int length) throws IOException {
    out.write(bytes, offset, length);
    if (!exchange.responseClassified()) {
      // headers are sent by now: the server itself set Transfer-encoding for a length of 0
      exchange.onResponseHeaders(
          httpExchange.getResponseHeaders().getFirst("Content-Type"),
          "chunked"
              .equalsIgnoreCase(httpExchange.getResponseHeaders().getFirst("Transfer-encoding")));
    }
    exchange.onResponseBytes(bytes, offset, length);
  }

  @Override
  public void flush() throws IOException {
    long sendingAt = exchange.sendingAt();
    out.flush();
    exchange.onResponseSent(sendingAt);
  }

  @Override
  public void close() throws IOException {
    long sendingAt = exchange.sendingAt();
    try {
      out.close();
    } finally {
      exchange.onResponseSent(sendingAt);
    }
  }
}
