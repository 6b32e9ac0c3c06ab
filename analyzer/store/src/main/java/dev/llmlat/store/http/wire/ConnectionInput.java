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
 */
final class ConnectionInput {
  private static final int MAX_LINE = 1 << 20; // ClickHouse's http_max_uri_size: query parameters may be long

  private final Socket socket;
  private final InputStream in;
  private final int idleTimeoutMillis;
  private final byte[] buffer = new byte[16 * 1024];
  private int start;
  private int end;
  private boolean eof;

  ConnectionInput(Socket socket, int idleTimeoutMillis) throws IOException {
    this.socket = socket;
    this.in = socket.getInputStream();
    this.idleTimeoutMillis = idleTimeoutMillis;
  }

  private boolean fill() throws IOException {
    if (start < end) {
      return true;
    }
    if (eof) {
      return false;
    }
    start = 0;
    end = 0;
    int n = in.read(buffer, 0, buffer.length);
    if (n < 0) {
      eof = true;
      return false;
    }
    end = n;
    return true;
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

  /** A line without its CRLF (or LF), or null at end of stream; bytes are ISO-8859-1 as HTTP's are. */
  String readLine() throws IOException {
    StringBuilder line = new StringBuilder();
    while (true) {
      if (!fill()) {
        return line.isEmpty() ? null : line.toString();
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
        if (line.length() > MAX_LINE) {
          throw new HttpProtocolException("a request line or header is longer than " + MAX_LINE + " bytes");
        }
      }
    }
  }

  /** Waits for the next request to begin; false when the client closed or stayed idle too long. */
  boolean awaitRequest() throws IOException {
    if (start < end) {
      return true;
    }
    socket.setSoTimeout(idleTimeoutMillis);
    try {
      return fill();
    } catch (SocketTimeoutException idle) {
      return false;
    } finally {
      socket.setSoTimeout(0);
    }
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
    try {
      socket.setSoTimeout(Math.max(1, waitMillis));
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
    } finally {
      try {
        socket.setSoTimeout(0);
      } catch (IOException ignored) {
        // the socket is gone; the next read says so
      }
    }
  }

  static String latin1(byte[] b) {
    return new String(b, StandardCharsets.ISO_8859_1);
  }
}
