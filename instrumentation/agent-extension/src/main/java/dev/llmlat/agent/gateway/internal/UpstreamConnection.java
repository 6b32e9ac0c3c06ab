package dev.llmlat.agent.gateway.internal;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.trace.Span;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How one upstream call got its connection to the engine, as a client stack's hooks see it: the
 * pool wait ({@value LlmlatAttributes#EVENT_UPSTREAM_ACQUIRE_START} with the pool's figures, then
 * {@value LlmlatAttributes#EVENT_UPSTREAM_ACQUIRED} with whether the connection was pooled), a new
 * connection's TCP connect and TLS handshake, and when the request's headers and body were written.
 * Each event is recorded once (the first hook to report it wins: several hooks of one client can
 * see the same moment), with the epoch time it happened.
 *
 * <p>The events go on the span that carries them, with {@value LlmlatAttributes#UPSTREAM_CLIENT}
 * set there: the call's CLIENT span when the client made it before the connection was sought; else
 * the gateway's local root span, each event naming the CLIENT span ({@value
 * LlmlatAttributes#UPSTREAM_SPAN_ID}) when that is known. Until that span is known (Reactor Netty
 * acquires before it starts its CLIENT span) the events wait here, each with its own time, and
 * {@link #attach} adds them.
 *
 * <p>Hooks of one call may run on different threads (a caller thread, then an event loop): the
 * methods synchronize on this object, uncontended in practice.
 */
public final class UpstreamConnection {
  /** {@value LlmlatAttributes#UPSTREAM_CLIENT} values. */
  public static final String APACHE_HTTPCLIENT_5 = "apache-httpclient-5";

  public static final String JDK_HTTP_CLIENT = "jdk-http-client";
  public static final String JETTY_CLIENT_12 = "jetty-client-12";
  public static final String REACTOR_NETTY = "reactor-netty";
  public static final String VERTX_HTTP_CLIENT = "vertx-http-client";

  private static final AttributeKey<String> CLIENT =
      AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_CLIENT);
  private static final AttributeKey<String> SPAN_ID =
      AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_SPAN_ID);
  private static final AttributeKey<String> POOL =
      AttributeKey.stringKey(LlmlatAttributes.UPSTREAM_POOL);
  private static final AttributeKey<Long> POOL_MAX =
      AttributeKey.longKey(LlmlatAttributes.UPSTREAM_POOL_MAX);
  private static final AttributeKey<Long> POOL_PENDING =
      AttributeKey.longKey(LlmlatAttributes.UPSTREAM_POOL_PENDING);
  private static final AttributeKey<Long> POOL_LEASED =
      AttributeKey.longKey(LlmlatAttributes.UPSTREAM_POOL_LEASED);
  private static final AttributeKey<Boolean> REUSED =
      AttributeKey.booleanKey(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED);

  private static final int ACQUIRE_START = 0;
  private static final int ACQUIRED = 1;
  private static final int CONNECT_START = 2;
  private static final int CONNECTED = 3;
  private static final int TLS_START = 4;
  private static final int TLS_DONE = 5;
  private static final int HEADERS_WRITTEN = 6;
  private static final int BODY_WRITTEN = 7;
  private static final String[] NAMES = {
    LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START,
    LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED,
    LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START,
    LlmlatAttributes.EVENT_UPSTREAM_CONNECTED,
    LlmlatAttributes.EVENT_UPSTREAM_TLS_START,
    LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE,
    LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN,
    LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN
  };

  private final String client;

  /** Events recorded so far, one bit each. */
  private int recorded;

  /** Where events go; null while waiting for {@link #attach}. */
  private Span span;

  /** Each event's span-id attribute on the root span; null on the CLIENT span itself. */
  private String clientSpanId;

  /** Events waiting for the span: name index, epoch nanos and attributes, in order. */
  private List<Object[]> waiting;

  private UpstreamConnection(String client, Span span, String clientSpanId) {
    this.client = client;
    this.span = span;
    this.clientSpanId = clientSpanId;
    if (span != null) {
      span.setAttribute(CLIENT, client);
    }
  }

  /**
   * Events of a call recorded as they happen on {@code span}: the call's CLIENT span, or (where the
   * client made none) the gateway's local root span with the CLIENT span's id when known. Null when
   * {@code span} is null or not recording.
   */
  public static UpstreamConnection on(Span span, String clientSpanId, String client) {
    return span == null || !span.isRecording()
        ? null
        : new UpstreamConnection(client, span, clientSpanId);
  }

  /** Events of a call whose span is not known yet: they wait for {@link #attach}. */
  public static UpstreamConnection pending(String client) {
    return new UpstreamConnection(client, null, null);
  }

  /** Adds the events so far to {@code span} (and every later one as it happens). */
  public synchronized void attach(Span span, String clientSpanId) {
    if (this.span != null || span == null || !span.isRecording()) {
      return;
    }
    this.span = span;
    this.clientSpanId = clientSpanId;
    span.setAttribute(CLIENT, client);
    if (waiting != null) {
      for (Object[] event : waiting) {
        add((Integer) event[0], (Long) event[1], (Attributes) event[2]);
      }
      waiting = null;
    }
  }

  /**
   * The call asked its pool for a connection.
   *
   * @param pool the pool's key for the destination (null when unknown)
   * @param max the most connections to that destination, negative when unknown (likewise the
   *     others)
   * @param pending requests already waiting for one of them
   * @param leased connections of that pool in use
   */
  public void acquireStart(String pool, long max, long pending, long leased) {
    acquireStart(epochNanos(), pool, max, pending, leased);
  }

  /** As {@link #acquireStart(String, long, long, long)}, at a time taken earlier. */
  public void acquireStart(long epochNanos, String pool, long max, long pending, long leased) {
    AttributesBuilder attributes = Attributes.builder();
    if (pool != null) {
      attributes.put(POOL, pool);
    }
    if (max >= 0) {
      attributes.put(POOL_MAX, max);
    }
    if (pending >= 0) {
      attributes.put(POOL_PENDING, pending);
    }
    if (leased >= 0) {
      attributes.put(POOL_LEASED, leased);
    }
    record(ACQUIRE_START, epochNanos, attributes.build());
  }

  /** The call got its connection: a pooled one ({@code reused}), a new one, or unknown (null). */
  public void acquired(Boolean reused) {
    acquired(epochNanos(), reused);
  }

  /** As {@link #acquired(Boolean)}, at a time taken earlier. */
  public void acquired(long epochNanos, Boolean reused) {
    record(
        ACQUIRED, epochNanos, reused == null ? Attributes.empty() : Attributes.of(REUSED, reused));
  }

  public void connectStart() {
    connectStart(epochNanos());
  }

  /** At a time taken earlier (a connection set up before the call that uses it was known). */
  public void connectStart(long epochNanos) {
    record(CONNECT_START, epochNanos, Attributes.empty());
  }

  public void connected() {
    connected(epochNanos());
  }

  public void connected(long epochNanos) {
    record(CONNECTED, epochNanos, Attributes.empty());
  }

  public void tlsStart() {
    tlsStart(epochNanos());
  }

  public void tlsStart(long epochNanos) {
    record(TLS_START, epochNanos, Attributes.empty());
  }

  public void tlsDone() {
    tlsDone(epochNanos());
  }

  public void tlsDone(long epochNanos) {
    record(TLS_DONE, epochNanos, Attributes.empty());
  }

  public void headersWritten() {
    record(HEADERS_WRITTEN, epochNanos(), Attributes.empty());
  }

  public void bodyWritten() {
    record(BODY_WRITTEN, epochNanos(), Attributes.empty());
  }

  private synchronized void record(int event, long epochNanos, Attributes attributes) {
    if ((recorded & (1 << event)) != 0) {
      return;
    }
    recorded |= 1 << event;
    if (span != null) {
      add(event, epochNanos, attributes);
      return;
    }
    if (waiting == null) {
      waiting = new ArrayList<>(8);
    }
    waiting.add(new Object[] {event, epochNanos, attributes});
  }

  private void add(int event, long epochNanos, Attributes attributes) {
    if (clientSpanId != null) {
      attributes = attributes.toBuilder().put(SPAN_ID, clientSpanId).build();
    }
    span.addEvent(NAMES[event], attributes, epochNanos, TimeUnit.NANOSECONDS);
  }

  /** Now, in epoch nanoseconds (the clock every span time is on). */
  public static long epochNanos() {
    Instant now = Instant.now();
    return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
  }
}
