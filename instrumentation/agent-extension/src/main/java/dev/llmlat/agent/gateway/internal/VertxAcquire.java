package dev.llmlat.agent.gateway.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Vert.x's HTTP client pool (4.5 and 5: {@code SimpleConnectionPool} of each endpoint, what
 * vertx-web-proxy and Vert.x gateways call through): when a lease was asked for, with the pool's
 * size for the connection kind and its waiters, when it was granted, and the connection granted. As
 * on Reactor Netty the client makes its CLIENT span only once it holds the connection: the record
 * is handed to the channel's {@link NettyUpstreamHandler} as the lease's stream is created, which
 * puts it on the gateway's root span as the request is written.
 *
 * <p>A lease granted later than asked for (after a wait for a connection, or a connect) is handed
 * over on the connection's event loop, where the agent's context is not the requester's, and the
 * request's head is written later still, from the piped request body (vertx-web-proxy): the agent
 * then starts the request's CLIENT span in a new trace. So the requester's context, taken as it
 * asks, is left on the channel as the parent the agent's Netty instrumentation starts that span
 * under (its {@code client-parent-context}, which it clears as the response ends), keeping the
 * request in the gateway's trace.
 *
 * <p>An acquisition is an agent's virtual field on its result handler until granted (Vert.x 4.5's
 * {@code Handler}, 5's {@code Completable}), then on the connection until its stream is made
 * (HTTP/1.1: one lease per connection at a time). The pool's executor runs one action at a time, so
 * each field is written and read in turn; the fields themselves are volatile.
 */
public final class VertxAcquire {
  /** The result handler's type of Vert.x 4.5's pool. */
  public static final String HANDLER_4 = "io.vertx.core.Handler";

  /** The result handler's type of Vert.x 5's pool (absent from 4.5). */
  public static final String HANDLER_5 = "io.vertx.core.Completable";

  /** The HTTP/1.x client connection a lease holds (4.5 and 5). */
  public static final String CONNECTION = "io.vertx.core.http.impl.Http1xClientConnection";

  /** On a pending acquisition's result handler, of the Vert.x beside this class. */
  private static final NamedVirtualField<Acquisition> STARTED = started();

  /** On a connection granted, until its stream is made. */
  private static final NamedVirtualField<Acquisition> GRANTED =
      NamedVirtualField.find(CONNECTION, VertxAcquire.class.getClassLoader(), Acquisition.class);

  /** The pool's public {@code waiters()}, per pool class (Vert.x 4 and 5 name it alike). */
  private static final ClassValue<MethodHandle> WAITERS = new Waiters();

  private VertxAcquire() {}

  private static NamedVirtualField<Acquisition> started() {
    ClassLoader loader = VertxAcquire.class.getClassLoader();
    NamedVirtualField<Acquisition> vertx5 =
        NamedVirtualField.find(HANDLER_5, loader, Acquisition.class);
    return vertx5 != null ? vertx5 : NamedVirtualField.find(HANDLER_4, loader, Acquisition.class);
  }

  /**
   * One acquisition: when it began (epoch nanos), the pool's size and waiters then, the requester's
   * context.
   */
  static final class Acquisition {
    final long start;
    final long max;
    final long pending;
    final Context context;
    long granted;

    Acquisition(long start, long max, long pending, Context context) {
      this.start = start;
      this.max = max;
      this.pending = pending;
      this.context = context;
    }
  }

  private static final class Waiters extends ClassValue<MethodHandle> {
    @Override
    protected MethodHandle computeValue(Class<?> type) {
      try {
        return MethodHandles.publicLookup()
            .findVirtual(type, "waiters", MethodType.methodType(int.class));
      } catch (ReflectiveOperationException | RuntimeException e) {
        return null;
      }
    }
  }

  /**
   * {@code pool} was asked for a lease of connection kind {@code kind} by {@code handler}: its size
   * for that kind is {@code maxCapacity / capacityFactors[kind]} (the pool counts capacity, not
   * connections, to mix HTTP/1 and HTTP/2 ones).
   */
  public static void started(
      Object handler, Object pool, int maxCapacity, int[] capacityFactors, int kind) {
    if (handler == null || STARTED == null || STARTED.get(handler) != null) {
      return;
    }
    long max =
        capacityFactors != null
                && kind >= 0
                && kind < capacityFactors.length
                && capacityFactors[kind] > 0
            ? maxCapacity / capacityFactors[kind]
            : -1;
    STARTED.set(
        handler,
        new Acquisition(UpstreamConnection.epochNanos(), max, waiters(pool), Context.current()));
  }

  private static long waiters(Object pool) {
    MethodHandle waiters = pool == null ? null : WAITERS.get(pool.getClass());
    if (waiters == null) {
      return -1;
    }
    try {
      return (int) waiters.invoke(pool);
    } catch (Throwable e) {
      return -1;
    }
  }

  /** The lease of {@code connection} is handed to {@code handler}. */
  public static void granted(Object handler, Object connection) {
    Acquisition acquisition = connection == null || STARTED == null ? null : STARTED.take(handler);
    if (acquisition == null) {
      return;
    }
    acquisition.granted = UpstreamConnection.epochNanos();
    if (GRANTED != null) {
      GRANTED.set(connection, acquisition);
    }
  }

  /**
   * The leased {@code connection} (its channel context {@code context}) makes the stream of the
   * request: its acquisition goes to the channel, new when no request went over it before.
   */
  public static void streamCreated(Object connection, ChannelHandlerContext context) {
    Acquisition grant = context == null || GRANTED == null ? null : GRANTED.take(connection);
    if (grant == null) {
      return;
    }
    Channel channel = context.channel();
    if (!channel.isActive()) {
      return;
    }
    UpstreamConnection call = UpstreamConnection.pending(UpstreamConnection.VERTX_HTTP_CLIENT);
    call.acquireStart(
        grant.start, NettyUpstreamHandler.pool(channel), grant.max, grant.pending, -1);
    call.acquired(grant.granted, NettyUpstreamHandler.servedRequests(channel));
    NettyUpstreamHandler.acquired(channel, call);
    if (Span.fromContext(grant.context).getSpanContext().isValid()) {
      NettyAgentContexts.parentIfNone(channel, grant.context);
    }
  }
}
