package dev.llmlat.agent.gateway.internal;

import io.netty.channel.Channel;
import io.opentelemetry.instrumentation.api.util.VirtualField;
import reactor.core.publisher.MonoSink;

/**
 * Reactor Netty's connection pool (its {@code PooledConnectionProvider}, what Spring WebFlux and
 * Spring Cloud Gateway call through): when an acquisition began, with the pool's figures, and the
 * pooled connection it ended with. Reactor Netty starts its CLIENT span only once it holds the
 * connection, so the acquisition's {@link UpstreamConnection} is handed to the channel's {@link
 * NettyUpstreamHandler}, which puts it on the gateway's root span as the request is written (when
 * the CLIENT span's id is in the request's {@code traceparent}).
 *
 * <p>One acquisition is an agent's virtual field on its result sink (shared by a retried
 * acquisition), so an acquisition cancelled before it ends leaves nothing behind. An acquisition's
 * subscription and its result come one after the other; the field itself is volatile.
 */
public final class ReactorNettyAcquire {
  /** On a pending acquisition's result sink. */
  private static final VirtualField<MonoSink<?>, Started> STARTED =
      VirtualField.find(MonoSink.class, Started.class);

  private ReactorNettyAcquire() {}

  /**
   * A pending acquisition: when it began (epoch nanos), and the pool's max, pending and acquired
   * figures then.
   */
  static final class Started {
    final long start;
    final long max;
    final long pending;
    final long acquired;

    Started(long start, long max, long pending, long acquired) {
      this.start = start;
      this.max = max;
      this.pending = pending;
      this.acquired = acquired;
    }
  }

  /**
   * The acquisition with result sink {@code sink} subscribes to the pool (a retry keeps the first
   * start).
   */
  public static void started(MonoSink<?> sink, int max, int pending, int acquired) {
    if (sink != null && STARTED.get(sink) == null) {
      STARTED.set(sink, new Started(UpstreamConnection.epochNanos(), max, pending, acquired));
    }
  }

  /**
   * The acquisition got {@code channel}, acquired {@code acquireCount} times in all (1: just
   * connected for it). A closed channel is not kept: the pool acquires again for the same sink.
   */
  public static void acquired(MonoSink<?> sink, Channel channel, int acquireCount) {
    if (sink == null || channel == null || !channel.isActive()) {
      return;
    }
    Started start = STARTED.get(sink);
    if (start == null) {
      return;
    }
    STARTED.set(sink, null);
    UpstreamConnection connection = UpstreamConnection.pending(UpstreamConnection.REACTOR_NETTY);
    connection.acquireStart(
        start.start, NettyUpstreamHandler.pool(channel), start.max, start.pending, start.acquired);
    connection.acquired(acquireCount > 1);
    NettyUpstreamHandler.acquired(channel, connection);
  }
}
