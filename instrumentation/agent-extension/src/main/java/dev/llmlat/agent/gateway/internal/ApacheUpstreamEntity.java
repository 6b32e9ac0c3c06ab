package dev.llmlat.agent.gateway.internal;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.HttpEntityWrapper;

/**
 * A streamed upstream entity, unchanged, whose content stream shows the bytes the application reads
 * to the {@link UpstreamExchange} (one reading thread at a time, as with any InputStream).
 */
final class ApacheUpstreamEntity extends HttpEntityWrapper {
  private final UpstreamExchange exchange;

  ApacheUpstreamEntity(HttpEntity wrapped, UpstreamExchange exchange) {
    super(wrapped);
    this.exchange = exchange;
  }

  @Override
  public InputStream getContent() throws IOException {
    InputStream content = super.getContent();
    return content == null ? null : new Observed(content);
  }

  @Override
  public void writeTo(OutputStream out) throws IOException {
    // through getContent: the wrapped entity's own writeTo would read around the observer
    try (InputStream in = getContent()) {
      if (in != null) {
        in.transferTo(out);
      }
    }
  }

  private final class Observed extends FilterInputStream {
    Observed(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = in.read();
      if (b >= 0 && exchange.waiting()) {
        exchange.onBytes(new byte[] {(byte) b}, 0, 1);
      }
      return b;
    }

    @Override
    public int read(byte[] bytes, int offset, int length) throws IOException {
      int n = in.read(bytes, offset, length);
      if (n > 0 && exchange.waiting()) {
        exchange.onBytes(bytes, offset, n);
      }
      return n;
    }
  }
}
