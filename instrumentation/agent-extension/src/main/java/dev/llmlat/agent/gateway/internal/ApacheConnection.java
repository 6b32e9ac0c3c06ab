package dev.llmlat.agent.gateway.internal;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.pool.ConnPoolStats;
import org.apache.hc.core5.pool.PoolStats;

/**
 * The connection of an OpenAI-style call made with Apache HttpClient 5 (classic I/O): the {@link
 * UpstreamConnection} of the call is kept in its {@code HttpContext}, which every stage of the
 * client gets (the exec chain, the endpoint lease, the connection operator and socket factories,
 * the request executor), and is recorded on the agent's CLIENT span, current in the calling thread
 * from the start of the call. Classic I/O runs the whole exchange in that thread: while the request
 * executor writes, the call's record is also this thread's.
 */
public final class ApacheConnection {
  /** The HttpContext attribute holding the call's {@link UpstreamConnection}. */
  static final String ATTRIBUTE = "dev.llmlat.upstream.connection";

  private static final ThreadLocal<UpstreamConnection> WRITING = new ThreadLocal<>();

  private ApacheConnection() {}

  /** As the exec chain reaches its connect stage with {@code request}: starts the call's record. */
  public static void begin(ClassicHttpRequest request, HttpContext context) {
    if (request == null
        || context == null
        || context.getAttribute(ATTRIBUTE) != null
        || !"POST".equalsIgnoreCase(request.getMethod())
        || OpenAiEndpoint.forPath(ApacheUpstream.path(request)) == null) {
      return;
    }
    Header traceparent = request.getFirstHeader("traceparent");
    String clientSpanId =
        traceparent == null ? null : UpstreamExchange.parentId(traceparent.getValue());
    Span current = Span.current();
    Span root = LocalRootSpan.fromContextOrNull(Context.current());
    String currentId =
        current.getSpanContext().isValid() ? current.getSpanContext().getSpanId() : null;
    boolean currentIsRoot = root != null && root.getSpanContext().getSpanId().equals(currentId);
    UpstreamConnection connection;
    if (currentId != null
        && !currentIsRoot
        && (clientSpanId == null || clientSpanId.equals(currentId))) {
      connection = UpstreamConnection.on(current, null, UpstreamConnection.APACHE_HTTPCLIENT_5);
    } else {
      // no CLIENT span of the agent's here (its instrumentation is off): the root names the one the
      // engine heard of
      connection =
          UpstreamConnection.on(root, clientSpanId, UpstreamConnection.APACHE_HTTPCLIENT_5);
    }
    if (connection != null) {
      context.setAttribute(ATTRIBUTE, connection);
    }
  }

  /**
   * As the endpoint is leased from {@code manager} for {@code route}: the pool's figures for the
   * route when the manager is a pool (PoolingHttpClientConnectionManager), keyed by the target.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static void acquireStart(
      HttpContext context, Object manager, Object route, HttpHost target) {
    UpstreamConnection connection = of(context);
    if (connection == null) {
      return;
    }
    String pool = target == null ? null : target.toURI();
    if (manager instanceof ConnPoolStats && route != null) {
      PoolStats stats = ((ConnPoolStats) manager).getStats(route);
      connection.acquireStart(pool, stats.getMax(), stats.getPending(), stats.getLeased());
    } else {
      connection.acquireStart(pool, -1, -1, -1);
    }
  }

  /**
   * The endpoint was leased: {@code connected} when it came from the pool with its connection open.
   */
  public static void acquired(HttpContext context, boolean connected) {
    UpstreamConnection connection = of(context);
    if (connection != null) {
      connection.acquired(connected);
    }
  }

  public static void connectStart(HttpContext context) {
    UpstreamConnection connection = of(context);
    if (connection != null) {
      connection.connectStart();
    }
  }

  public static void connected(HttpContext context) {
    UpstreamConnection connection = of(context);
    if (connection != null) {
      connection.connected();
    }
  }

  /** TLS begins (on a socket already connected, so the connect ends here at the latest). */
  public static void tlsStart(HttpContext context) {
    UpstreamConnection connection = of(context);
    if (connection != null) {
      connection.connected();
      connection.tlsStart();
    }
  }

  public static void tlsDone(HttpContext context) {
    UpstreamConnection connection = of(context);
    if (connection != null) {
      connection.tlsDone();
    }
  }

  /** The request executor starts writing the call's request in this thread. */
  public static void writing(HttpContext context) {
    WRITING.set(of(context));
  }

  /** The request executor is done with the exchange. */
  public static void written() {
    WRITING.remove();
  }

  public static void headersWritten() {
    UpstreamConnection connection = WRITING.get();
    if (connection != null) {
      connection.headersWritten();
    }
  }

  public static void bodyWritten() {
    UpstreamConnection connection = WRITING.get();
    if (connection != null) {
      connection.bodyWritten();
    }
  }

  private static UpstreamConnection of(HttpContext context) {
    Object connection = context == null ? null : context.getAttribute(ATTRIBUTE);
    return connection instanceof UpstreamConnection ? (UpstreamConnection) connection : null;
  }
}
