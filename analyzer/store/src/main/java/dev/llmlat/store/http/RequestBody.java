package dev.llmlat.store.http;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EofException;

/**
 * A request body as Jetty frames it. A body that ends early, breaks its chunked framing or pauses
 * past the receive timeout throws {@link Broken} rather than ending: whoever copies it (an INSERT's
 * staging file) must see it fail, never a truncated body that looks complete. The failure is kept,
 * so the request can still be answered 400 or 408 when a decoder on top wrapped it.
 */
final class RequestBody extends InputStream {
  /**
   * Why a body could not be read whole: answered with {@link #status()}, then the connection
   * closes.
   */
  static final class Broken extends IOException {
    private static final long serialVersionUID = 1L;
    private final int status;

    Broken(int status, String message, Throwable cause) {
      super(message, cause);
      this.status = status;
    }

    int status() {
      return status;
    }
  }

  private final InputStream in;
  private final boolean chunked;
  private final long length;
  private final Duration receiveTimeout;
  private long received;
  private boolean finished;
  private Broken failure;

  RequestBody(Content.Source source, boolean chunked, long length, Duration receiveTimeout) {
    this.in = Content.Source.asInputStream(source);
    this.chunked = chunked;
    this.length = length;
    this.receiveTimeout = receiveTimeout;
    this.finished = !chunked && length <= 0;
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
    if (finished) {
      return -1;
    }
    if (failure != null) {
      throw failure;
    }
    int n;
    try {
      n = in.read(b, off, len);
    } catch (IOException | RuntimeException e) {
      failure = broken(e);
      throw failure;
    }
    if (n < 0) {
      finished = true;
    } else {
      received += n;
    }
    return n;
  }

  private Broken broken(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException) {
        return new Broken(
            408, "the request body paused for longer than " + text(receiveTimeout), e);
      }
      if (t instanceof HttpException h && !"Early EOF".equals(h.getReason())) {
        return new Broken(h.getCode(), h.getReason(), e); // the chunked framing broke
      }
      if (t instanceof EofException || t instanceof HttpException) {
        break;
      }
    }
    // Jetty reports a broken chunk and a connection closed in a chunk alike ("Early EOF")
    return new Broken(
        400,
        chunked
            ? "the chunked request body broke off after "
                + received
                + " bytes (a bad chunk size or chunk end, or the client"
                + " closed the connection in the middle of it)"
            : "the request body ended after "
                + received
                + " of the "
                + length
                + " bytes of its Content-Length",
        e);
  }

  /** "500 ms", "30 s": for the reasons sent to clients. */
  static String text(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }

  /** Whether the whole body has been read. */
  boolean finished() {
    return finished;
  }

  /** Why the body broke, or null. */
  Broken failure() {
    return failure;
  }
}
