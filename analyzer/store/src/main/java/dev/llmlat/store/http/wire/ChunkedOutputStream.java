package dev.llmlat.store.http.wire;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** HTTP/1.1 chunked transfer coding, buffered into chunks of up to 64 KiB. */
final class ChunkedOutputStream extends OutputStream {
  private final OutputStream out;
  private final byte[] buffer = new byte[64 * 1024];
  private int count;
  private boolean finished;

  ChunkedOutputStream(OutputStream out) {
    this.out = out;
  }

  @Override
  public void write(int b) throws IOException {
    if (count == buffer.length) {
      flushChunk();
    }
    buffer[count++] = (byte) b;
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    while (len > 0) {
      if (count == buffer.length) {
        flushChunk();
      }
      int n = Math.min(len, buffer.length - count);
      System.arraycopy(b, off, buffer, count, n);
      count += n;
      off += n;
      len -= n;
    }
  }

  private void flushChunk() throws IOException {
    if (count == 0) {
      return;
    }
    out.write((Integer.toHexString(count) + "\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(buffer, 0, count);
    out.write('\r');
    out.write('\n');
    count = 0;
  }

  /** Sends what is buffered as a chunk, so the client has it now. */
  @Override
  public void flush() throws IOException {
    flushChunk();
    out.flush();
  }

  /** The last chunk: the body is complete. */
  void finish() throws IOException {
    if (finished) {
      return;
    }
    flushChunk();
    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    out.flush();
    finished = true;
  }

  /** Closing does not end the body: only {@link #finish()} does (a failed stream must stay cut off). */
  @Override
  public void close() throws IOException {
    flush();
  }
}
