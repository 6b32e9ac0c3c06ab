package dev.llmlat.agent.gateway.internal;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;

/**
 * Passes the request body read as characters through unchanged, showing it to {@link
 * GatewayExchange} as UTF-8 (the scanner only needs the JSON's ASCII structure and short values).
 */
final class ObservedReader extends Reader {
  private final Reader in;
  private final GatewayExchange exchange;

  ObservedReader(Reader in, GatewayExchange exchange) {
    this.in = in;
    this.exchange = exchange;
  }

  @Override
  public int read(char[] chars, int offset, int length) throws IOException {
    int n = in.read(chars, offset, length);
    if (n > 0) {
      byte[] bytes = new String(chars, offset, n).getBytes(StandardCharsets.UTF_8);
      exchange.onRequestBytes(bytes, 0, bytes.length);
    }
    return n;
  }

  @Override
  public boolean ready() throws IOException {
    return in.ready();
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
