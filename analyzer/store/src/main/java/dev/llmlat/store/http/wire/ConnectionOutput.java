package dev.llmlat.store.http.wire;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The buffered output side of one client connection. Its buffer exists only while an answer is
 * being written: between requests {@link #release()} lets it go, so an idle connection holds none.
 */
final class ConnectionOutput extends OutputStream {
  private static final int BUFFER = 64 * 1024;

  private final OutputStream out;
  private byte[] buffer;
  private int count;

  ConnectionOutput(OutputStream out) {
    this.out = out;
  }

  @Override
  public void write(int b) throws IOException {
    if (buffer == null) {
      buffer = new byte[BUFFER];
    } else if (count == buffer.length) {
      flushBuffer();
    }
    buffer[count++] = (byte) b;
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (len >= BUFFER) {
      flushBuffer(); // as BufferedOutputStream: a large write goes straight through
      out.write(b, off, len);
      return;
    }
    if (buffer == null) {
      buffer = new byte[BUFFER];
    } else if (len > buffer.length - count) {
      flushBuffer();
    }
    System.arraycopy(b, off, buffer, count, len);
    count += len;
  }

  private void flushBuffer() throws IOException {
    if (count > 0) {
      out.write(buffer, 0, count);
      count = 0;
    }
  }

  @Override
  public void flush() throws IOException {
    flushBuffer();
    out.flush();
  }

  /** Drops the (flushed) buffer while the connection waits for its next request. */
  void release() {
    if (count == 0) {
      buffer = null;
    }
  }
}
