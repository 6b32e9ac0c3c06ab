package dev.llmlat.store.http.wire;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * A request body: Content-Length bytes, or HTTP/1.1 chunks, read from the connection's buffered
 * stream. Reading past its end answers -1 and never consumes the next request.
 */
final class BodyInputStream extends InputStream {
  private final ConnectionInput in;
  private final boolean chunked;
  private long remaining; // in the body (fixed length) or in the current chunk
  private boolean done;

  BodyInputStream(ConnectionInput in, long length, boolean chunked) {
    this.in = in;
    this.chunked = chunked;
    this.remaining = chunked ? 0 : length;
    this.done = !chunked && length == 0;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    if (done) {
      return -1;
    }
    if (remaining == 0) {
      if (!chunked) {
        done = true;
        return -1;
      }
      remaining = nextChunkSize();
      if (remaining == 0) {
        skipTrailers();
        done = true;
        return -1;
      }
    }
    int n = in.read(b, off, (int) Math.min(len, remaining));
    if (n < 0) {
      throw new EOFException("the client closed the connection in the middle of the request body");
    }
    remaining -= n;
    if (chunked && remaining == 0) {
      in.readLine(); // the CRLF after a chunk
    }
    return n;
  }

  private long nextChunkSize() throws IOException {
    String line = in.readLine();
    if (line == null) {
      throw new EOFException("the client closed the connection in the middle of a chunked body");
    }
    int semicolon = line.indexOf(';');
    String hex = (semicolon < 0 ? line : line.substring(0, semicolon)).strip();
    try {
      long size = Long.parseLong(hex, 16);
      if (size < 0) {
        throw new NumberFormatException();
      }
      return size;
    } catch (NumberFormatException e) {
      throw new HttpProtocolException("bad chunk size '" + hex + "'");
    }
  }

  private void skipTrailers() throws IOException {
    String line;
    while ((line = in.readLine()) != null && !line.isEmpty()) {
      // trailers carry nothing ClickHouse's interface uses
    }
  }

  /** Reads and drops what is left, so the connection can carry the next request. */
  void drain() throws IOException {
    byte[] sink = new byte[8192];
    while (read(sink, 0, sink.length) >= 0) {
      // dropping
    }
  }

  boolean finished() {
    return done;
  }
}
