package dev.llmlat.agent.gateway.internal;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.instrumentation.api.util.VirtualField;
import org.eclipse.jetty.client.AbstractConnectionPool;
import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.ConnectionPool;
import org.eclipse.jetty.client.Destination;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.transport.HttpDestination;
import org.eclipse.jetty.client.transport.HttpExchange;
import org.eclipse.jetty.client.transport.internal.HttpConnectionOverHTTP;
import org.eclipse.jetty.util.Promise;

/**
 * The connection of an OpenAI-style call made with Jetty 12's {@code HttpClient}, recorded on the
 * agent's CLIENT span (current when the request is sent, and open until the response ends): the
 * wait in the destination's queue (queued until the exchange is handed a connection, with the
 * destination's pool figures), whether that connection served requests before, and, when the
 * request's headers were committed and its content sent (the request's own listeners).
 *
 * <p>Jetty opens connections for a destination, not for a request: a new plain-HTTP connection's
 * connect (from {@code HttpClient.newConnection} until the connection is opened) is given to the
 * exchange that first uses it. TLS connections are opened inside Jetty's SSL layer, out of these
 * hooks' sight: their connect and handshake are not recorded.
 */
public final class JettyConnection {
  /** The request attribute holding the call's {@link UpstreamConnection}. */
  static final String ATTRIBUTE = "dev.llmlat.upstream.connection";

  /**
   * On a plain connection opened and not yet used: its connect (an agent's virtual field, set as
   * the connection is opened and taken as an exchange is first sent on it, one after the other).
   */
  private static final VirtualField<Connection, Opened> OPENED =
      VirtualField.find(Connection.class, Opened.class);

  private JettyConnection() {}

  /** A connection's connect: when it began and ended (epoch nanos). */
  static final class Opened {
    final long connectStart;
    final long connected;

    Opened(long connectStart, long connected) {
      this.connectStart = connectStart;
      this.connected = connected;
    }
  }

  /** As an observed request is sent (inside its CLIENT span): starts the call's record. */
  public static void onSend(Request request) {
    UpstreamConnection connection =
        UpstreamConnection.on(Span.current(), null, UpstreamConnection.JETTY_CLIENT_12);
    if (connection == null) {
      return;
    }
    request.attribute(ATTRIBUTE, connection);
    request.onRequestCommit(committed -> connection.headersWritten());
    request.onRequestSuccess(sent -> connection.bodyWritten());
  }

  /** As the exchange joins {@code destination}'s queue (the requests before it are still there). */
  public static void queued(HttpDestination destination, HttpExchange exchange) {
    UpstreamConnection connection = of(exchange);
    if (connection == null) {
      return;
    }
    ConnectionPool pool = destination.getConnectionPool();
    long max = -1;
    long leased = -1;
    if (pool instanceof AbstractConnectionPool) {
      max = ((AbstractConnectionPool) pool).getMaxConnectionCount();
      leased = ((AbstractConnectionPool) pool).getActiveConnectionCount();
    }
    connection.acquireStart(
        destination.getOrigin().asString(), max, destination.getQueuedRequestCount(), leased);
  }

  /** As the exchange is handed {@code used} to be sent on. */
  public static void sending(Connection used, HttpExchange exchange) {
    UpstreamConnection connection = of(exchange);
    if (connection == null) {
      return;
    }
    Opened opened = used == null ? null : OPENED.get(used);
    if (opened != null) {
      OPENED.set(used, null);
    }
    Boolean reused =
        used instanceof HttpConnectionOverHTTP
            ? ((HttpConnectionOverHTTP) used).getMessagesOut() > 0
            : null;
    if (opened != null) {
      connection.connectStart(opened.connectStart);
      connection.connected(opened.connected);
      reused = Boolean.FALSE;
    }
    connection.acquired(reused);
  }

  /** {@code promise} timed from now until it gets its connection, when that is a plain one. */
  public static Promise<Connection> timed(Destination destination, Promise<Connection> promise) {
    if (promise == null || destination == null || destination.isSecure()) {
      return promise;
    }
    return new TimedPromise(promise, UpstreamConnection.epochNanos());
  }

  private static UpstreamConnection of(HttpExchange exchange) {
    Object connection =
        exchange == null ? null : exchange.getRequest().getAttributes().get(ATTRIBUTE);
    return connection instanceof UpstreamConnection ? (UpstreamConnection) connection : null;
  }

  private static final class TimedPromise implements Promise<Connection> {
    private final Promise<Connection> delegate;
    private final long connectStart;

    TimedPromise(Promise<Connection> delegate, long connectStart) {
      this.delegate = delegate;
      this.connectStart = connectStart;
    }

    @Override
    public void succeeded(Connection connection) {
      if (connection != null) {
        OPENED.set(connection, new Opened(connectStart, UpstreamConnection.epochNanos()));
      }
      delegate.succeeded(connection);
    }

    @Override
    public void failed(Throwable failure) {
      delegate.failed(failure);
    }
  }
}
