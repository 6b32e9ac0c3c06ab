package dev.llmlat.store.http;

import java.time.Duration;
import java.util.concurrent.Executor;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;

/**
 * One request and its answer, and a way to learn that the client went away while the answer is
 * computed.
 */
final class HttpExchange {
  /**
   * An unread body up to this is skipped by Jetty to keep the connection; a longer one closes it.
   */
  private static final long DRAIN_LIMIT = 1 << 20;

  private final HttpRequest request;
  private final HttpResponse response;
  private final RequestBody body;
  private final ClientWatch watch;
  private final Connection connection;

  HttpExchange(
      Request jetty, Response answer, Duration keepAlive, Duration receive, Executor executor) {
    boolean chunked = jetty.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
    long length = jetty.getLength();
    this.body = new RequestBody(jetty, chunked, length, receive);
    this.request =
        new HttpRequest(
            jetty.getMethod(),
            jetty.getHttpURI().getPath(),
            jetty.getHttpURI().getQuery(),
            jetty.getHeaders(),
            body);
    boolean http11 = jetty.getConnectionMetaData().getHttpVersion() == HttpVersion.HTTP_1_1;
    boolean persistent =
        http11
            && !jetty
                .getHeaders()
                .contains(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
    this.response =
        new HttpResponse(
            answer,
            persistent,
            (int) Math.max(1, keepAlive.toSeconds()),
            () -> !body.finished() && (chunked || length > DRAIN_LIMIT));
    this.connection = jetty.getConnectionMetaData().getConnection();
    this.watch = new ClientWatch(connection.getEndPoint(), connection, executor);
  }

  HttpRequest request() {
    return request;
  }

  HttpResponse response() {
    return response;
  }

  /** Why the body could not be read, or null. */
  RequestBody.Broken bodyFailure() {
    return body.failure();
  }

  /**
   * Runs {@code gone} when the client closes the connection, until {@link #stopWatching()}. Only
   * once the whole body has been read (before, the client is still sending); from then no timeout
   * cuts the connection while the engine works.
   */
  void watchClient(Runnable gone) {
    if (body.finished()) {
      connection.getEndPoint().setIdleTimeout(0);
      watch.start(gone);
    }
  }

  void stopWatching() {
    watch.stop();
  }
}
