package dev.llmlat.agent.gateway.internal;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/** Passes the request body through unchanged, showing each byte read to {@link GatewayExchange}. */
final class JdkObservedRequestBody extends FilterInputStream {
  private final GatewayExchange exchange;

  JdkObservedRequestBody(InputStream in, GatewayExchange exchange) {
    super(in);
    this.exchange = exchange;
  }

  @Override
  public int read() throws IOException {
    int b = in.read();
    if (b >= 0) {
      exchange.onRequestBytes(new byte[] {(byte) b}, 0, 1);
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
  public boolean markSupported() {
    return false; // a reset would show bytes twice
  }
}
