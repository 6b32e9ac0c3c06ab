package dev.llmlat.agent.gateway.internal;

import io.netty.channel.Channel;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * Reactor Netty's connection pool (its {@code PooledConnectionProvider}, what Spring WebFlux and
 * Spring Cloud Gateway call through): when an acquisition began, with the pool's figures, and the
 * pooled connection it ended with. Reactor Netty starts its CLIENT span only once it holds the
 * connection, so the acquisition's {@link UpstreamConnection} is handed to the channel's {@link
 * NettyUpstreamHandler}, which puts it on the gateway's root span as the request is written (when
 * the CLIENT span's id is in the request's {@code traceparent}).
 *
 * <p>One acquisition is keyed by its result sink (shared by a retried acquisition); the key is held
 * weakly, so an acquisition cancelled before it ends leaves nothing behind.
 */
public final class ReactorNettyAcquire {
  /** Per pending acquisition: epoch nanos of its start, then the pool's max, pending and acquired figures. */
  private static final Map<Object, long[]> STARTED = Collections.synchronizedMap(new WeakHashMap<>());

  private ReactorNettyAcquire() {}

  /** The acquisition with result sink {@code sink} subscribes to the pool (a retry keeps the first start). */
  public static void started(Object sink, int max, int pending, int acquired) {
    if (sink != null) {
      STARTED.putIfAbsent(sink, new long[] {UpstreamConnection.epochNanos(), max, pending, acquired});
    }
  }

  /**
   * The acquisition got {@code channel}, acquired {@code acquireCount} times in all (1: just
   * connected for it). A closed channel is not kept: the pool acquires again for the same sink.
   */
  public static void acquired(Object sink, Channel channel, int acquireCount) {
    if (sink == null || channel == null || !channel.isActive()) {
      return;
    }
    long[] start = STARTED.remove(sink);
    if (start == null) {
      return;
    }
    UpstreamConnection connection = UpstreamConnection.pending(UpstreamConnection.REACTOR_NETTY);
    connection.acquireStart(start[0], NettyUpstreamHandler.pool(channel), start[1], start[2], start[3]);
    connection.acquired(acquireCount > 1);
    NettyUpstreamHandler.acquired(channel, connection);
  }
}
