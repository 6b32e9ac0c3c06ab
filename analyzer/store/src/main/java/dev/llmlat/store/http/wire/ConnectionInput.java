package dev.llmlat.store.http.wire;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * The buffered input side of one client connection. Besides reading requests it can tell,
 * without losing a byte, whether the client has gone away while a query runs: a probe read with
 * a short timeout answers end-of-stream for a closed connection, and whatever else it reads (a
 * pipelined next request) stays in the buffer.
 *
 * <p>Every read is timed: the request line and headers against one deadline, a body byte by
 * byte, the wait for the next request by the keep-alive timeout. A connection waiting for its
 * next request holds no buffer, so many idle connections cost little memory.
 */
final class ConnectionInput {
  private static final int BUFFER = 16 * 1024;

  private final Socket socket;
  private final InputStream in;
  private final HttpTimeouts timeouts;
  private byte[] buffer; // null while idle
  private int start;
  private int end;
  private boolean eof;
  private long headDeadline; // System.nanoTime() by which the head must be in; 0 outside the head
  private int soTimeout = -1; // what the socket has now, to skip redundant calls

  ConnectionInput(Socket socket, HttpTimeouts timeouts) throws IOException {
    this.socket = socket;
    this.in = socket.getInputStream();
    this.timeouts = timeouts;
  }

  private boolean fill() throws IOException {
    if (start < end) {
      return true;
    }
    if (eof) {
      return false;
    }
    if (buffer == null) {
      buffer = new byte[BUFFER];
    }
    start = 0;
    end = 0;
    int n;
    try {
      timeout(headDeadline != 0 ? headRemainingMillis() : timeouts.receiveMillis());
      n = in.read(buffer, 0, buffer.length);
    } catch (SocketTimeoutException slow) {
      throw headDeadline != 0 ? headTooSlow()
          : new HttpProtocolException(408, "the request body paused for longer than " + HttpTimeouts.text(timeouts.receive()));
    }
    if (n < 0) {
      eof = true;
      return false;
    }
    end = n;
    return true;
  }

  private int headRemainingMillis() throws HttpProtocolException {
    long left = (headDeadline - System.nanoTime()) / 1_000_000;
    if (left <= 0) {
      throw headTooSlow();
    }
    return (int) Math.min(left, Integer.MAX_VALUE);
  }

  private HttpProtocolException headTooSlow() {
    String within = HttpTimeouts.text(timeouts.header());
    return new HttpProtocolException(408, "the request line and headers did not arrive within " + within);
  }

  private void timeout(int millis) throws IOException {
    if (millis != soTimeout) {
      socket.setSoTimeout(millis);
      soTimeout = millis;
    }
  }

  /** From now the request line and headers must be complete within the header timeout. */
  void beginHead() {
    headDeadline = System.nanoTime() + timeouts.header().toNanos();
    if (headDeadline == 0) {
      headDeadline = 1; // 0 means "outside the head"
    }
  }

  /** The head is in: from now reads wait by the receive timeout. */
  void endHead() {
    headDeadline = 0;
  }

  int read(byte[] b, int off, int len) throws IOException {
    if (!fill()) {
      return -1;
    }
    int n = Math.min(len, end - start);
    System.arraycopy(buffer, start, b, off, n);
    start += n;
    return n;
  }

  /** One byte, or -1 at end of stream. */
  int readByte() throws IOException {
    return fill() ? buffer[start++] & 0xff : -1;
  }

  /**
   * A line without its CRLF (or LF), or null when the stream ends before the line does; bytes are
   * ISO-8859-1 as HTTP's are. A line longer than {@code max} bytes is a protocol error.
   */
  String readLine(int max, String what) throws IOException {
    StringBuilder line = new StringBuilder();
    while (true) {
      if (!fill()) {
        return null;
      }
      while (start < end) {
        byte b = buffer[start++];
        if (b == '\n') {
          int len = line.length();
          if (len > 0 && line.charAt(len - 1) == '\r') {
            line.setLength(len - 1);
          }
          return line.toString();
        }
        line.append((char) (b & 0xff));
        if (line.length() > max) {
          throw new HttpProtocolException(what + " is longer than " + max + " bytes");
        }
      }
    }
  }

  /** Waits for the next request to begin; false when the client closed or stayed idle too long. */
  boolean awaitRequest() throws IOException {
    if (start < end) {
      return true; // pipelined
    }
    if (eof) {
      return false;
    }
    buffer = null; // idle: let the buffer go, one byte is all it takes to wake up
    start = 0;
    end = 0;
    int first;
    try {
      timeout(timeouts.keepAliveMillis());
      first = in.read();
    } catch (SocketTimeoutException idle) {
      return false;
    }
    if (first < 0) {
      eof = true;
      return false;
    }
    buffer = new byte[BUFFER];
    buffer[0] = (byte) first;
    end = 1;
    return true;
  }

  /**
   * True when the client has closed its side (or the connection broke). Only meaningful once
   * the request body has been read: then a well-behaved client sends nothing until the answer.
   */
  boolean peerGone(int waitMillis) {
    if (eof) {
      return true;
    }
    if (start < end) {
      return false; // a pipelined request waits: the client is there
    }
    if (buffer == null) {
      buffer = new byte[BUFFER];
    }
    try {
      timeout(Math.max(1, waitMillis));
      int n = in.read(buffer, 0, buffer.length);
      if (n < 0) {
        eof = true;
        return true;
      }
      start = 0;
      end = n;
      return false;
    } catch (SocketTimeoutException stillThere) {
      return false;
    } catch (IOException broken) {
      eof = true;
      return true;
    }
  }

  static String latin1(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }
}
