package dev.llmlat.store.http.wire;

/**
 * One request and its answer on a connection, and a way to ask whether the client is still
 * there while the answer is being computed.
 */
public final class HttpExchange {
  private final HttpRequest request;
  private final HttpResponse response;
  private final ConnectionInput input;
  private final BodyInputStream body;

  HttpExchange(HttpRequest request, HttpResponse response, ConnectionInput input, BodyInputStream body) {
    this.request = request;
    this.response = response;
    this.input = input;
    this.body = body;
  }

  public HttpRequest request() {
    return request;
  }

  public HttpResponse response() {
    return response;
  }

  /**
   * Whether the client closed the connection, waiting up to {@code waitMillis} for a sign. Only
   * asked once the whole request body has been read (before, the client is still sending).
   */
  public boolean clientGone(int waitMillis) {
    if (!body.finished()) {
      return false;
    }
    return input.peerGone(waitMillis);
  }
}
