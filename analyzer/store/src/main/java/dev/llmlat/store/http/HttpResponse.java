package dev.llmlat.store.http;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.function.BooleanSupplier;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Response;

/**
 * The answer to one request, over Jetty's response: a status and headers, then a body of known
 * length or a streamed one. A streamed answer that fails midway is cut off (Jetty aborts the
 * connection without the last chunk), so the client sees it broken rather than complete.
 */
final class HttpResponse {
  private final Response response;
  private final boolean keepAlive;
  private final int keepAliveSeconds;
  private final BooleanSupplier mustClose;
  private OutputStream out;
  private boolean committed;
  private boolean streamed;
  private boolean closeAfter;
  private boolean cutOff;
  private boolean finished;

  /**
   * @param keepAlive whether the client keeps the connection (HTTP/1.1 without Connection: close):
   *     the answer says for how long
   * @param mustClose says, when the answer starts, whether an unread body keeps the connection from
   *     carrying another request
   */
  HttpResponse(
      Response response, boolean keepAlive, int keepAliveSeconds, BooleanSupplier mustClose) {
    this.response = response;
    this.keepAlive = keepAlive;
    this.keepAliveSeconds = keepAliveSeconds;
    this.mustClose = mustClose;
  }

  HttpResponse header(String name, String value) {
    if (committed) {
      throw new IllegalStateException("headers already sent");
    }
    response.getHeaders().put(name, value);
    return this;
  }

  boolean committed() {
    return committed;
  }

  /** Closes the connection after this answer; an answer already on its way is cut off. */
  void closeAfter() {
    closeAfter = true;
    if (committed) {
      cutOff = true;
    }
  }

  /** Sends the whole answer at once. */
  void send(int status, byte[] body) throws IOException {
    OutputStream o = fixed(status, body.length);
    o.write(body);
    finish();
  }

  /**
   * Sends the status and headers of a body of {@code length} bytes, which the caller writes to the
   * returned stream.
   */
  OutputStream fixed(int status, long length) throws IOException {
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, length);
    return begin(status);
  }

  /** Sends the status and headers; the body follows through the returned stream, chunked. */
  OutputStream stream(int status) throws IOException {
    streamed = true;
    return begin(status);
  }

  /** Ends the body properly (the last chunk of a streamed one). */
  void finish() throws IOException {
    if (!finished && !cutOff) {
      finished = true;
      out.close();
    }
  }

  /**
   * After the handler: whether the answer is complete; false means the connection is to be aborted.
   */
  boolean complete() throws IOException {
    if (!committed || cutOff) {
      return false;
    }
    if (!streamed) {
      finish(); // a body of known length is complete once its bytes are out
    }
    return finished;
  }

  private OutputStream begin(int status) {
    if (committed) {
      throw new IllegalStateException("answer already sent");
    }
    committed = true;
    response.setStatus(status);
    if (closeAfter || mustClose.getAsBoolean()) {
      // say so now: a client must not send its next request on this connection
      response.getHeaders().put(HttpHeader.CONNECTION, "close");
    } else if (keepAlive) { // HTTP/1.1 keeps the connection without saying so; else Jetty answers
      // the client's Connection header
      response.getHeaders().put(HttpHeader.KEEP_ALIVE, "timeout=" + keepAliveSeconds);
    }
    out = new BufferedOutputStream(Content.Sink.asOutputStream(response), 64 * 1024);
    return new FilterOutputStream(out) {
      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
      }

      @Override
      public void close() throws IOException {
        flush(); // only finish() ends the body: a failed stream must stay cut off
      }
    };
  }
}
