package dev.llmlat.agent.gateway.internal;

import java.nio.ByteBuffer;
import org.eclipse.jetty.io.Content;

/**
 * Passes a streamed upstream body through unchanged, showing each chunk to the {@link
 * UpstreamExchange} as the client's listeners read it (Jetty reads one chunk at a time per source).
 */
final class JettyUpstreamContentSource implements Content.Source {
  private final Content.Source delegate;
  private final UpstreamExchange exchange;

  JettyUpstreamContentSource(Content.Source delegate, UpstreamExchange exchange) {
    this.delegate = delegate;
    this.exchange = exchange;
  }

  @Override
  public Content.Chunk read() {
    Content.Chunk chunk = delegate.read();
    if (chunk != null && exchange.waiting() && !Content.Chunk.isFailure(chunk)) {
      ByteBuffer bytes = chunk.getByteBuffer();
      if (bytes != null) {
        exchange.onBytes(bytes);
      }
    }
    return chunk;
  }

  @Override
  public long getLength() {
    return delegate.getLength();
  }

  @Override
  public void demand(Runnable demandCallback) {
    delegate.demand(demandCallback);
  }

  @Override
  public void fail(Throwable failure) {
    delegate.fail(failure);
  }

  @Override
  public void fail(Throwable failure, boolean last) {
    delegate.fail(failure, last);
  }

  @Override
  public boolean rewind() {
    return delegate.rewind();
  }
}
