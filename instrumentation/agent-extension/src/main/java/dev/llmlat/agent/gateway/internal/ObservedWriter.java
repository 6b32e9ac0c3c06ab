package dev.llmlat.agent.gateway.internal;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;

/**
 * Passes the response body written as characters through to the container's writer unchanged,
 * showing it to {@link GatewayExchange} as UTF-8 (event framing is ASCII; a surrogate pair split
 * across two writes only blurs captured text). A write or flush that blocks long is backpressure
 * ({@link GatewayExchange#onBlockingWriteReturned}).
 */
final class ObservedWriter extends Writer {
  private final Writer out;
  private final ObservedServletResponse response;
  private final GatewayExchange exchange;

  ObservedWriter(Writer out, ObservedServletResponse response, GatewayExchange exchange) {
    this.out = out;
    this.response = response;
    this.exchange = exchange;
  }

  @Override
  public void write(char[] chars, int offset, int length) throws IOException {
    long start = System.nanoTime();
    out.write(chars, offset, length);
    exchange.onBlockingWriteReturned(start);
    observe(new String(chars, offset, length));
  }

  @Override
  public void write(String text, int offset, int length) throws IOException {
    long start = System.nanoTime();
    out.write(text, offset, length);
    exchange.onBlockingWriteReturned(start);
    observe(text.substring(offset, offset + length));
  }

  @Override
  public void write(int c) throws IOException {
    long start = System.nanoTime();
    out.write(c);
    exchange.onBlockingWriteReturned(start);
    observe(String.valueOf((char) c));
  }

  private void observe(String text) {
    if (text.isEmpty()) {
      return;
    }
    response.beforeBody();
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    exchange.onResponseBytes(bytes, 0, bytes.length);
  }

  @Override
  public void flush() throws IOException {
    long sendingAt = exchange.sendingAt();
    long start = System.nanoTime();
    out.flush();
    exchange.onBlockingWriteReturned(start);
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
