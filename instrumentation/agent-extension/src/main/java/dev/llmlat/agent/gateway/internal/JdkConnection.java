package dev.llmlat.agent.gateway.internal;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

/**
 * The connection of an OpenAI-style call made with the JDK {@code HttpClient} (HTTP/1.1), from its
 * internals ({@code jdk.internal.net.http}, JDK 11 to 25), recorded on the agent's CLIENT span
 * (current where the call's first {@code Exchange} is made, inside {@code sendAsync}; it ends at
 * the response headers, after every event here).
 *
 * <p>The client has no bound on the connections in use: an exchange takes an idle connection from
 * its {@code ConnectionPool} or opens a new one at once, and {@code
 * jdk.httpclient.connectionPoolSize} only bounds the idle ones kept. So the "pool wait" recorded
 * (the exchange's {@code HttpConnection.getConnection}) is a lookup, never a queue: no pool size
 * nor pending count exists to report. Then a new connection's TCP connect ({@code
 * PlainHttpConnection.connectAsync} until its future completes), its TLS handshake ({@code
 * AsyncSSLConnection}: from the connect's end until {@code finishConnect}'s future, which waits for
 * the handshake), and the request's headers and body handed to the connection (the exchange's own
 * futures).
 *
 * <p>The objects of one call are linked by the agent's virtual fields on them: the call's record on
 * its {@code MultiExchange} (one per call, its retries and redirects included) and on each of its
 * {@code Exchange}s. The hooks run on the caller's thread, the client's executor and its selector
 * thread, but each field is written and read in turn along one call or one connection (the pool
 * hands a connection to one exchange at a time); the fields themselves are volatile.
 */
public final class JdkConnection {
  private static final String INTERNAL = "jdk.internal.net.http.";

  /** The owners' names, as the instrumentation module registers its fields. */
  public static final String MULTI_EXCHANGE = INTERNAL + "MultiExchange";

  public static final String EXCHANGE = INTERNAL + "Exchange";
  public static final String HTTP_CONNECTION = INTERNAL + "HttpConnection";
  public static final String SSL_CONNECTION = INTERNAL + "AsyncSSLConnection";

  /** The java.net.http module's loader (the platform class loader, not the bootstrap one). */
  private static final ClassLoader CLIENT_LOADER = HttpRequest.class.getClassLoader();

  /** Per MultiExchange and per Exchange: the call's record. */
  private static final NamedVirtualField<Call> MULTI_CALL =
      NamedVirtualField.find(MULTI_EXCHANGE, CLIENT_LOADER, Call.class);

  private static final NamedVirtualField<Call> EXCHANGE_CALL =
      NamedVirtualField.find(EXCHANGE, CLIENT_LOADER, Call.class);

  /** On a connection the pool handed out, until an exchange takes it. */
  private static final NamedVirtualField<Boolean> POOLED =
      NamedVirtualField.find(HTTP_CONNECTION, CLIENT_LOADER, Boolean.class);

  /** On a TLS connection being set up for a call, until its handshake ends. */
  private static final NamedVirtualField<Call> HANDSHAKING =
      NamedVirtualField.find(SSL_CONNECTION, CLIENT_LOADER, Call.class);

  /** Whether the client's classes are the ones these hooks know (JDK 11 to 25). */
  private static final boolean KNOWN =
      MULTI_CALL != null && EXCHANGE_CALL != null && POOLED != null && HANDSHAKING != null;

  private JdkConnection() {}

  /** One call's record and the pool it draws on. */
  static final class Call {
    final UpstreamConnection connection;
    final String pool;
    volatile boolean secure;

    Call(UpstreamConnection connection, String pool) {
      this.connection = connection;
      this.pool = pool;
    }
  }

  /**
   * An {@code Exchange} of {@code multi} was made for {@code request}: the call's first starts its
   * record (inside the agent's CLIENT span), a later one (a retry) joins it.
   */
  public static void exchange(Object exchange, HttpRequest request, Object multi) {
    if (!KNOWN || exchange == null || multi == null) {
      return;
    }
    Call call = MULTI_CALL.get(multi);
    if (call == null) {
      call = begin(request);
      if (call == null) {
        return;
      }
      MULTI_CALL.set(multi, call);
    }
    EXCHANGE_CALL.set(exchange, call);
  }

  private static Call begin(HttpRequest request) {
    if (request == null
        || !"POST".equalsIgnoreCase(request.method())
        || OpenAiEndpoint.forPath(request.uri().getPath()) == null) {
      return null;
    }
    Span current = Span.current();
    Span root = LocalRootSpan.fromContextOrNull(Context.current());
    boolean currentIsRoot =
        root != null
            && root.getSpanContext().getSpanId().equals(current.getSpanContext().getSpanId());
    UpstreamConnection connection =
        current.getSpanContext().isValid() && !currentIsRoot
            ? UpstreamConnection.on(current, null, UpstreamConnection.JDK_HTTP_CLIENT)
            // no CLIENT span of the agent's (its java-http-client instrumentation is off): on the
            // root
            : UpstreamConnection.on(root, null, UpstreamConnection.JDK_HTTP_CLIENT);
    return connection == null ? null : new Call(connection, pool(request.uri()));
  }

  /** The pool's key as the client has it (scheme, host and port of the request). */
  static String pool(URI uri) {
    int port = uri.getPort();
    if (port < 0) {
      port = "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }
    return uri.getScheme() + "://" + uri.getHost() + ":" + port;
  }

  /**
   * An HTTP/1.1 exchange is made for {@code exchange}; it asks for a connection unless handed
   * {@code given}.
   */
  public static void acquiring(Object exchange, Object given) {
    Call call = given == null ? of(exchange) : null;
    if (call != null) {
      call.connection.acquireStart(call.pool, -1, -1, -1);
    }
  }

  /** The pool handed out {@code connection} (idle until now); null when it had none. */
  public static void pooled(Object connection) {
    if (KNOWN && connection != null) {
      POOLED.set(connection, Boolean.TRUE);
    }
  }

  /**
   * The HTTP/1.1 exchange got {@code connection}: a pooled one, or one made for it (not connected
   * yet).
   */
  public static void acquired(Object exchange, Object connection) {
    boolean pooled = KNOWN && POOLED.take(connection) != null;
    Call call = of(exchange);
    if (call != null && connection != null) {
      call.connection.acquired(pooled);
    }
  }

  /** A TLS connection is set up for {@code exchange}: its handshake follows the TCP connect. */
  public static void secureConnecting(Object sslConnection, Object exchange) {
    Call call = of(exchange);
    if (call != null) {
      call.secure = true;
      HANDSHAKING.set(sslConnection, call);
    }
  }

  /** The TCP connect for {@code exchange} begins: {@code connecting} completes when it is done. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  public static CompletableFuture connecting(Object exchange, CompletableFuture connecting) {
    Call call = of(exchange);
    if (call == null || connecting == null) {
      return connecting;
    }
    call.connection.connectStart();
    return connecting.whenComplete(new Mark(call, Mark.CONNECTED));
  }

  /**
   * {@code sslConnection}'s set-up finishes when {@code finishing} completes: its TLS handshake is
   * done.
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  public static CompletableFuture handshaking(Object sslConnection, CompletableFuture finishing) {
    Call call = KNOWN ? HANDSHAKING.take(sslConnection) : null;
    return call == null || finishing == null
        ? finishing
        : finishing.whenComplete(new Mark(call, Mark.TLS_DONE));
  }

  /**
   * {@code exchange}'s request headers are handed to the connection when {@code sent} completes.
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  public static CompletableFuture sendingHeaders(Object exchange, CompletableFuture sent) {
    Call call = of(exchange);
    return call == null || sent == null
        ? sent
        : sent.whenComplete(new Mark(call, Mark.HEADERS_WRITTEN));
  }

  /** {@code exchange}'s request body is handed to the connection when {@code sent} completes. */
  @SuppressWarnings({"rawtypes", "unchecked"})
  public static CompletableFuture sendingBody(Object exchange, CompletableFuture sent) {
    Call call = of(exchange);
    return call == null || sent == null
        ? sent
        : sent.whenComplete(new Mark(call, Mark.BODY_WRITTEN));
  }

  private static Call of(Object exchange) {
    return !KNOWN || exchange == null ? null : EXCHANGE_CALL.get(exchange);
  }

  /** Records one moment of a call as the future it is given to completes successfully. */
  static final class Mark implements BiConsumer<Object, Throwable> {
    static final int CONNECTED = 0;
    static final int TLS_DONE = 1;
    static final int HEADERS_WRITTEN = 2;
    static final int BODY_WRITTEN = 3;

    private final Call call;
    private final int moment;

    Mark(Call call, int moment) {
      this.call = call;
      this.moment = moment;
    }

    @Override
    public void accept(Object result, Throwable failure) {
      if (failure != null) {
        return;
      }
      UpstreamConnection connection = call.connection;
      switch (moment) {
        case CONNECTED:
          long now = UpstreamConnection.epochNanos();
          connection.connected(now);
          if (call.secure) {
            connection.tlsStart(
                now); // the SSL tube wraps the socket as the connect ends and starts the handshake
          }
          break;
        case TLS_DONE:
          connection.tlsDone();
          break;
        case HEADERS_WRITTEN:
          connection.headersWritten();
          break;
        default:
          connection.bodyWritten();
      }
    }
  }
}
