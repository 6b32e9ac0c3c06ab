package dev.llmlat.agent.gateway.internal;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import java.net.SocketAddress;

/**
 * Times the set-up of a client channel whose HTTP codec (and so its {@link NettyUpstreamHandler})
 * is added only once the channel is connected and its TLS handshake done, as Vert.x's client does:
 * put first in the pipeline as the channel is initialised, it sees the connect and the handshake of
 * the {@link SslHandler} behind it, leaves the four times (epoch nanos; 0: none) in a channel
 * attribute for the channel's first request, and removes itself.
 */
public final class NettyConnectTimer extends ChannelDuplexHandler {
  static final String NAME = "llmlat.connect";
  private static final AttributeKey<long[]> SETUP = AttributeKey.valueOf("llmlat.upstream.setup");

  private long connectStart;
  private long connected;

  /** Puts a timer first in {@code channel}'s pipeline (before it connects). */
  public static void install(Channel channel) {
    if (channel != null && channel.pipeline().get(NAME) == null) {
      channel.pipeline().addFirst(NAME, new NettyConnectTimer());
    }
  }

  /**
   * {@code channel}'s set-up as a timer saw it (connect start, connected, TLS start, TLS done),
   * once: null when none timed it.
   */
  static long[] takeSetup(Channel channel) {
    return channel.hasAttr(SETUP) ? channel.attr(SETUP).getAndSet(null) : null;
  }

  @Override
  public void connect(
      ChannelHandlerContext ctx, SocketAddress remote, SocketAddress local, ChannelPromise promise)
      throws Exception {
    connectStart = UpstreamConnection.epochNanos();
    // timed as the connect completes, before the caller's listeners run (they go on with the
    // channel)
    ChannelPromise connecting = ctx.newPromise();
    connecting.addListener(new Connected(this, ctx, promise));
    promise.addListener(new Cancelled(connecting));
    ctx.connect(remote, local, connecting);
  }

  private void connected(ChannelHandlerContext ctx) {
    connected = UpstreamConnection.epochNanos();
    SslHandler ssl = ctx.pipeline().get(SslHandler.class);
    if (ssl == null) {
      done(ctx, 0, 0);
    } else {
      // the handler starts its handshake as the channel becomes active, right after this
      ssl.handshakeFuture().addListener(new Handshaken(this, ctx, connected));
    }
  }

  private void done(ChannelHandlerContext ctx, long tlsStart, long tlsDone) {
    ctx.channel().attr(SETUP).set(new long[] {connectStart, connected, tlsStart, tlsDone});
    if (ctx.pipeline().context(this) != null) {
      ctx.pipeline().remove(this);
    }
  }

  private static final class Connected implements GenericFutureListener<Future<Void>> {
    private final NettyConnectTimer timer;
    private final ChannelHandlerContext ctx;
    private final ChannelPromise promise;

    Connected(NettyConnectTimer timer, ChannelHandlerContext ctx, ChannelPromise promise) {
      this.timer = timer;
      this.ctx = ctx;
      this.promise = promise;
    }

    @Override
    public void operationComplete(Future<Void> done) {
      if (done.isSuccess()) {
        timer.connected(ctx);
        promise.trySuccess();
      } else if (done.isCancelled()) {
        promise.cancel(false);
      } else {
        promise.tryFailure(done.cause());
      }
    }
  }

  private static final class Cancelled implements GenericFutureListener<Future<Void>> {
    private final ChannelPromise connecting;

    Cancelled(ChannelPromise connecting) {
      this.connecting = connecting;
    }

    @Override
    public void operationComplete(Future<Void> done) {
      if (done.isCancelled()) {
        connecting.cancel(false);
      }
    }
  }

  private static final class Handshaken implements GenericFutureListener<Future<Channel>> {
    private final NettyConnectTimer timer;
    private final ChannelHandlerContext ctx;
    private final long tlsStart;

    Handshaken(NettyConnectTimer timer, ChannelHandlerContext ctx, long tlsStart) {
      this.timer = timer;
      this.ctx = ctx;
      this.tlsStart = tlsStart;
    }

    @Override
    public void operationComplete(Future<Channel> done) {
      timer.done(ctx, tlsStart, done.isSuccess() ? UpstreamConnection.epochNanos() : 0);
    }
  }
}
