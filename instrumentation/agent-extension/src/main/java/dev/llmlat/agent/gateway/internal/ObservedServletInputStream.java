package dev.llmlat.agent.gateway.internal;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import java.io.IOException;

/** Passes the request body through unchanged, showing each byte read to {@link GatewayExchange}. */
final class ObservedServletInputStream extends ServletInputStream {
  private final ServletInputStream in;
  private final GatewayExchange exchange;
  private final byte[] one = new byte[1];

  ObservedServletInputStream(ServletInputStream in, GatewayExchange exchange) {
    this.in = in;
    this.exchange = exchange;
  }

  @Override
  public int read() throws IOException {
    int b = in.read();
    if (b >= 0) {
      one[0] = (byte) b;
      exchange.onRequestBytes(one, 0, 1);
    }
    return b;
  }

  @Override
  public int read(byte[] bytes, int offset, int length) throws IOException {
    int n = in.read(bytes, offset, length);
    if (n > 0) {
      exchange.onRequestBytes(bytes, offset, n);
    }
    return n;
  }

  @Override
  public long skip(long n) throws IOException {
    return in.skip(n); // skipped bytes were not read by the application: nothing to observe
  }

  @Override
  public int available() throws IOException {
    return in.available();
  }

  @Override
  public void close() throws IOException {
    in.close();
  }

  @Override
  public boolean isFinished() {
    return in.isFinished();
  }

  @Override
  public boolean isReady() {
    return in.isReady();
  }

  @Override
  public void setReadListener(ReadListener listener) {
    in.setReadListener(listener);
  }
}
