package dev.llmlat.load;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The lines of a server-sent event stream, read in chunks of {@value #CHUNK} bytes as they arrive.
 * Lines end at CR, LF or CRLF (the SSE grammar); one leading byte order mark is dropped. A line
 * longer than the limit is refused with {@link TooLong} as soon as it passes the limit: a hostile
 * server sending megabytes without a newline costs at most the limit, never the whole line.
 */
final class EventLines {
  private static final int CHUNK = 8192;

  /** A line passed the limit. */
  static final class TooLong extends IOException {
    TooLong(int limit) {
      super("line too long (over " + ByteSize.describe(limit) + " without a line break)");
    }
  }

  private final InputStream in;
  private final int limit;
  private final byte[] chunk = new byte[CHUNK];
  private int pos;
  private int end;
  private byte[] line = new byte[256];
  private int length;
  private boolean afterCr; // a CR ended the last line: an LF right after it belongs to it
  private boolean started;

  EventLines(InputStream in, int limit) {
    this.in = in;
    this.limit = limit;
  }

  /**
   * The next line without its terminator; null at the end of the stream (a last unterminated line
   * is returned first).
   */
  String next() throws IOException {
    length = 0;
    while (true) {
      if (pos == end && !fill()) {
        return length > 0 ? text() : null;
      }
      if (afterCr) {
        afterCr = false;
        if (chunk[pos] == '\n') {
          pos++;
          continue;
        }
      }
      int start = pos;
      while (pos < end && chunk[pos] != '\n' && chunk[pos] != '\r') {
        pos++;
      }
      append(start, pos - start);
      if (pos < end) {
        afterCr = chunk[pos] == '\r';
        pos++;
        return text();
      }
    }
  }

  private boolean fill() throws IOException {
    int n = in.read(chunk, 0, CHUNK);
    if (n <= 0) {
      return false; // read never returns 0 for a non-empty buffer; -1 is the end
    }
    pos = 0;
    end = n;
    if (!started) {
      started = true;
      if (n >= 3
          && (chunk[0] & 0xFF) == 0xEF
          && (chunk[1] & 0xFF) == 0xBB
          && (chunk[2] & 0xFF) == 0xBF) {
        pos = 3;
      }
    }
    return true;
  }

  private void append(int from, int n) throws TooLong {
    if (n > limit - length) {
      throw new TooLong(limit);
    }
    if (length + n > line.length) {
      line =
          Arrays.copyOf(line, (int) Math.min(limit, Math.max((long) line.length * 2, length + n)));
    }
    System.arraycopy(chunk, from, line, length, n);
    length += n;
  }

  private String text() {
    String s = new String(line, 0, length, StandardCharsets.UTF_8);
    if (line.length > CHUNK * 4) {
      line = new byte[256]; // one long line does not keep its buffer for the rest of the stream
    }
    return s;
  }
}
