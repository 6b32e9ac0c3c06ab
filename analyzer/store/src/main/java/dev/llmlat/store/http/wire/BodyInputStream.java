package dev.llmlat.store.http.wire;

import java.io.IOException;
import java.io.InputStream;
import java.util.regex.Pattern;

/**
 * A request body: Content-Length bytes, or HTTP/1.1 chunks, read from the connection's buffered
 * stream. Reading past its end answers -1 and never consumes the next request.
 *
 * <p>A body that ends early or breaks the chunked framing throws {@link HttpProtocolException}
 * rather than ending: whoever copies it (an INSERT's staging file) must see it fail, never a
 * truncated body that looks complete. The failure is kept, so the connection can still answer
 * 400 when a decoder on top wrapped it into another exception.
 */
final class BodyInputStream extends InputStream {
  static final int MAX_CHUNK_LINE = 4096; // a chunk size and its extensions
  private static final int MAX_TRAILER_LINE = 128 * 1024;
  private static final int MAX_TRAILERS = 200;
  private static final Pattern HEX = Pattern.compile("[0-9A-Fa-f]{1,15}"); // 15 digits cannot overflow a long

  private final ConnectionInput in;
  private final boolean chunked;
  private final long length;
  private long remaining; // in the body (fixed length) or in the current chunk
  private long received;
  private boolean done;
  private HttpProtocolException failure;

  BodyInputStream(ConnectionInput in, long length, boolean chunked) {
    this.in = in;
    this.chunked = chunked;
    this.length = length;
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
    if (failure != null) {
      throw failure;
    }
    try {
      return readSome(b, off, len);
    } catch (HttpProtocolException e) {
      failure = e;
      throw e;
    }
  }

  private int readSome(byte[] b, int off, int len) throws IOException {
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
      throw truncated();
    }
    remaining -= n;
    received += n;
    if (chunked && remaining == 0) {
      int cr = in.readByte();
      int lf = in.readByte();
      if (cr < 0 || lf < 0) {
        throw truncated();
      }
      if (cr != '\r' || lf != '\n') {
        throw new HttpProtocolException("a chunk's data is not followed by CRLF (its size is wrong)");
      }
    }
    return n;
  }

  private HttpProtocolException truncated() {
    return new HttpProtocolException(chunked
        ? "the client closed the connection in the middle of a chunked body, after " + received + " bytes"
        : "the request body ended after " + received + " of the " + length + " bytes of its Content-Length");
  }

  private long nextChunkSize() throws IOException {
    String line = in.readLine(MAX_CHUNK_LINE, "a chunk-size line");
    if (line == null) {
      throw truncated();
    }
    int semicolon = line.indexOf(';');
    // RFC 9112 §7.1: hex digits, then optional whitespace before an extension; nothing looser,
    // as a lenient parser frames the body differently from a proxy in front
    String hex = semicolon < 0 ? line : line.substring(0, semicolon).stripTrailing();
    if (!HEX.matcher(hex).matches()) {
      throw new HttpProtocolException("bad chunk size '" + printable(hex) + "'");
    }
    return Long.parseLong(hex, 16);
  }

  private void skipTrailers() throws IOException {
    for (int i = 0; ; i++) {
      String line = in.readLine(MAX_TRAILER_LINE, "a trailer");
      if (line == null) {
        throw truncated();
      }
      if (line.isEmpty()) {
        return; // trailers carry nothing ClickHouse's interface uses
      }
      if (i == MAX_TRAILERS) {
        throw new HttpProtocolException("more than " + MAX_TRAILERS + " trailers");
      }
    }
  }

  private static String printable(String s) {
    String cut = s.length() > 40 ? s.substring(0, 40) + "..." : s;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
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

  /** Why the body broke, or null. */
  HttpProtocolException failure() {
    return failure;
  }
}
