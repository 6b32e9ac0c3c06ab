package dev.llmlat.store.http.wire;

import java.io.IOException;

/** The client broke HTTP/1.1 (or was too slow): the connection is answered {@link #status()} and closed. */
public final class HttpProtocolException extends IOException {
  private static final long serialVersionUID = 1L;
  private final int status;

  public HttpProtocolException(String message) {
    this(400, message);
  }

  public HttpProtocolException(int status, String message) {
    super(message);
    this.status = status;
  }

  /** 400 for broken framing, 408 for a request that did not arrive in time. */
  public int status() {
    return status;
  }
}
