package dev.llmlat.store.http.wire;

import java.io.IOException;

/** The client broke HTTP/1.1: the connection is answered 400 and closed. */
public final class HttpProtocolException extends IOException {
  private static final long serialVersionUID = 1L;

  public HttpProtocolException(String message) {
    super(message);
  }
}
