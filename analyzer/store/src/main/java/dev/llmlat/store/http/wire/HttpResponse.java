package dev.llmlat.store.http.wire;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The answer to one request: a status and headers, then either a body of known length or a
 * chunked stream. A streamed answer that fails midway is cut off without its last chunk, so
 * the client sees it broken rather than complete.
 */
public final class HttpResponse {
  private final OutputStream socketOut;
  private final boolean head;
  private final Map<String, String> headers = new LinkedHashMap<>();
  private boolean keepAlive;
  private final int keepAliveSeconds;
  private final java.util.function.BooleanSupplier mustClose;
  private boolean committed;
  private ChunkedOutputStream chunked;

  /** {@code mustClose} says, when the answer starts, whether the connection cannot carry another request. */
  HttpResponse(OutputStream socketOut, boolean head, boolean keepAlive, int keepAliveSeconds,
      java.util.function.BooleanSupplier mustClose) {
    this.socketOut = socketOut;
    this.head = head;
    this.keepAlive = keepAlive;
    this.keepAliveSeconds = keepAliveSeconds;
    this.mustClose = mustClose;
  }

  public HttpResponse header(String name, String value) {
    if (committed) {
      throw new IllegalStateException("headers already sent");
    }
    headers.put(name, value);
    return this;
  }

  public boolean committed() {
    return committed;
  }

  /** Closes the connection after this answer (an unread body, a broken stream). */
  public void closeAfter() {
    keepAlive = false;
  }

  boolean keepAlive() {
    return keepAlive;
  }

  /** Sends the whole answer at once. */
  public void send(int status, byte[] body) throws IOException {
    writeHead(status, "Content-Length", Integer.toString(body.length));
    if (!head) {
      socketOut.write(body);
    }
    socketOut.flush();
  }

  /** Sends the status and headers of a body of {@code length} bytes, which the caller writes to the returned stream. */
  public OutputStream fixed(int status, long length) throws IOException {
    writeHead(status, "Content-Length", Long.toString(length));
    return head ? OutputStream.nullOutputStream() : socketOut;
  }

  /** Sends the status and headers; the body follows through the returned stream, chunked. */
  public OutputStream stream(int status) throws IOException {
    writeHead(status, "Transfer-Encoding", "chunked");
    chunked = new ChunkedOutputStream(head ? OutputStream.nullOutputStream() : socketOut);
    return chunked;
  }

  /** Ends a streamed body properly. */
  public void finish() throws IOException {
    if (chunked != null) {
      chunked.finish();
    }
    socketOut.flush();
  }

  private void writeHead(int status, String lengthHeader, String lengthValue) throws IOException {
    if (committed) {
      throw new IllegalStateException("answer already sent");
    }
    committed = true;
    if (mustClose.getAsBoolean()) {
      keepAlive = false; // say so now: a client must not send its next request on this connection
    }
    StringBuilder head = new StringBuilder(256);
    head.append("HTTP/1.1 ").append(status).append(' ').append(reason(status)).append("\r\n");
    headers.forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
    head.append(lengthHeader).append(": ").append(lengthValue).append("\r\n");
    head.append("Connection: ").append(keepAlive ? "Keep-Alive" : "Close").append("\r\n");
    if (keepAlive) {
      head.append("Keep-Alive: timeout=").append(keepAliveSeconds).append("\r\n");
    }
    head.append("\r\n");
    socketOut.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
  }

  static String reason(int status) {
    return switch (status) {
      case 100 -> "Continue";
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 408 -> "Request Timeout";
      case 411 -> "Length Required";
      case 413 -> "Request Entity Too Large";
      case 415 -> "Unsupported Media Type";
      case 500 -> "Internal Server Error";
      case 501 -> "Not Implemented";
      case 503 -> "Service Unavailable";
      default -> "Status " + status;
    };
  }
}
