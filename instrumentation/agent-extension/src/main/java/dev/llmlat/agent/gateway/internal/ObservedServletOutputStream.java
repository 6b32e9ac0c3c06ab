package dev.llmlat.agent.gateway.internal;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.IOException;

/**
 * Passes the response body through to the container's stream unchanged, observing it. The stream
 * blocks while the client's socket is full (a blocking write or flush that takes long is
 * backpressure, {@link GatewayExchange#onBlockingWriteReturned}); under non-blocking IO ({@link
 * #setWriteListener}) the time from {@link #isReady()} answering false to the container's {@code
 * onWritePossible} is.
 */
final class ObservedServletOutputStream extends ServletOutputStream {
  private final ServletOutputStream out;
  private final ObservedServletResponse response;
  private final GatewayExchange exchange;
  private final byte[] one = new byte[1];

  /** When {@link #isReady()} last answered false (nanoTime, epoch ns); 0 while ready. */
  private volatile long notReadySince;

  private volatile long notReadySinceEpoch;

  ObservedServletOutputStream(
      ServletOutputStream out, ObservedServletResponse response, GatewayExchange exchange) {
    this.out = out;
    this.response = response;
    this.exchange = exchange;
  }

  @Override
  public void write(int b) throws IOException {
    long start = System.nanoTime();
    out.write(b);
    exchange.onBlockingWriteReturned(start);
    response.beforeBody();
    one[0] = (byte) b;
    exchange.onResponseBytes(one, 0, 1);
  }

  @Override
  public void write(byte[] bytes, int offset, int length) throws IOException {
    long start = System.nanoTime();
    out.write(bytes, offset, length);
    exchange.onBlockingWriteReturned(start);
    response.beforeBody();
    exchange.onResponseBytes(bytes, offset, length);
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
    long start = System.nanoTime();
    try {
      out.close();
      exchange.onBlockingWriteReturned(start);
    } finally {
      exchange.onResponseSent(sendingAt);
    }
  }

  @Override
  public boolean isReady() {
    boolean ready = out.isReady();
    if (!ready && notReadySince == 0) {
      notReadySinceEpoch = GatewayExchange.epochNanos();
      notReadySince = System.nanoTime();
    }
    return ready;
  }

  @Override
  public void setWriteListener(WriteListener listener) {
    out.setWriteListener(
        new WriteListener() {
          @Override
          public void onWritePossible() throws IOException {
            long since = notReadySince;
            if (since != 0) {
              notReadySince = 0;
              exchange.onBackpressure(notReadySinceEpoch, System.nanoTime() - since);
            }
            listener.onWritePossible();
          }

          @Override
          public void onError(Throwable t) {
            listener.onError(t);
          }
        });
  }
}
