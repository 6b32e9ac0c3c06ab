package dev.llmlat.agent.gateway.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.IOException;

/** Passes the response body through to the container's stream unchanged, observing it. */
final class ObservedServletOutputStream extends ServletOutputStream {
  private final ServletOutputStream out;
  private final ObservedServletResponse response;
  private final GatewayExchange exchange;
  private final byte[] one = new byte[1];

  ObservedServletOutputStream(
      ServletOutputStream out, ObservedServletResponse response, GatewayExchange exchange) {
    this.out = out;
    this.response = response;
    this.exchange = exchange;
  }

  @Override
  public void write(int b) throws IOException {
    out.write(b);
    response.beforeBody();
    one[0] = (byte) b;
    exchange.onResponseBytes(one, 0, 1);
  }

  @Override
  public void write(byte[] bytes, int offset, int length) throws IOException {
    out.write(bytes, offset, length);
    response.beforeBody();
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

  @Override
  public boolean isReady() {
    return out.isReady();
  }

  @Override
  public void setWriteListener(WriteListener listener) {
    out.setWriteListener(listener);
  }
}
