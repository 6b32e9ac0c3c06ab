package dev.llmlat.agent.it;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Settings;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One streamed POST over HTTP/2 without TLS (prior knowledge) on Netty's {@code Http2FrameCodec},
 * whose flow control is the client's to drive: the codec returns a DATA frame's bytes to the
 * server's windows (a {@code WINDOW_UPDATE} once half a window is consumed) only when the client
 * writes a window update for them. This client consumes each frame as it arrives, except during a
 * pause of its own: from when it has received {@code beforePause} body bytes it consumes nothing
 * for {@code pauseMillis} (the server's stream window runs out), then consumes what arrived and
 * goes on. Its stream window is {@code SETTINGS_INITIAL_WINDOW_SIZE} {@code streamWindow}; the
 * codec widens the connection's to it where that is more than the default 65,535.
 */
final class H2cStreamClient {
  /**
   * What the client saw: the response's status; whether the body ended with {@code data: [DONE]};
   * its pause (0 when none): how long, and when it began and ended (epoch ns); the body's bytes.
   */
  record Read(
      int status,
      boolean completeStream,
      long pauseNanos,
      long pausedEpochNanos,
      long resumedEpochNanos,
      long bytes) {}

  private static final byte[] DONE = "data: [DONE]".getBytes(StandardCharsets.US_ASCII);

  private H2cStreamClient() {}

  static Read post(
      URI gateway,
      String path,
      byte[] body,
      String traceparent,
      int streamWindow,
      long beforePause,
      long pauseMillis)
      throws Exception {
    EventLoopGroup group = new NioEventLoopGroup(1);
    try {
      Exchange exchange = new Exchange(gateway, path, body, traceparent, beforePause, pauseMillis);
      Channel channel =
          new Bootstrap()
              .group(group)
              .channel(NioSocketChannel.class)
              .handler(
                  new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                      ch.pipeline()
                          .addLast(
                              Http2FrameCodecBuilder.forClient()
                                  .initialSettings(
                                      Http2Settings.defaultSettings()
                                          .initialWindowSize(streamWindow))
                                  .build(),
                              exchange);
                    }
                  })
              .connect(gateway.getHost(), gateway.getPort())
              .sync()
              .channel();
      try {
        return exchange.done.get(60, TimeUnit.SECONDS);
      } finally {
        channel.close().sync();
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }

  /** The request's stream: sends it, reads the response, returns the bytes of its DATA frames. */
  private static final class Exchange extends Http2ChannelDuplexHandler {
    final CompletableFuture<Read> done = new CompletableFuture<>();
    private final URI gateway;
    private final String path;
    private final byte[] body;
    private final String traceparent;
    private final long beforePause;
    private final long pauseMillis;

    private int status;
    private long bytes;
    private byte[] tail = new byte[0];
    private boolean pausing;
    private boolean paused;
    private long pausedNanoTime;
    private long pausedEpochNanos;
    private long pauseNanos;
    private long resumedEpochNanos;

    /** Frames received in the pause, their bytes not yet returned. */
    private final List<Http2DataFrame> unconsumed = new ArrayList<>();

    private boolean ended;

    Exchange(
        URI gateway,
        String path,
        byte[] body,
        String traceparent,
        long beforePause,
        long pauseMillis) {
      this.gateway = gateway;
      this.path = path;
      this.body = body;
      this.traceparent = traceparent;
      this.beforePause = beforePause;
      this.pauseMillis = pauseMillis;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      super.channelActive(ctx);
      Http2FrameStream stream = newStream();
      Http2Headers headers =
          new DefaultHttp2Headers()
              .method("POST")
              .path(path)
              .scheme("http")
              .authority(gateway.getHost() + ":" + gateway.getPort())
              .set("content-type", "application/json")
              .set("traceparent", traceparent);
      ctx.write(new DefaultHttp2HeadersFrame(headers, false).stream(stream));
      ctx.writeAndFlush(
          new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(body), true).stream(stream));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (msg instanceof Http2HeadersFrame headers) {
        CharSequence code = headers.headers().status();
        if (code != null && status == 0) {
          status = Integer.parseInt(code.toString());
        }
        if (headers.isEndStream()) {
          finish();
        }
      } else if (msg instanceof Http2DataFrame data) {
        ByteBuf content = data.content();
        bytes += content.readableBytes();
        keepTail(content);
        if (pausing) {
          unconsumed.add(data); // released once its bytes are returned
        } else {
          consume(ctx, data);
          if (!paused && pauseMillis > 0 && bytes >= beforePause) {
            pause(ctx);
          }
        }
        if (data.isEndStream()) {
          finish();
        }
      } else if (msg instanceof Http2ResetFrame reset) {
        done.completeExceptionally(
            new AssertionError("the gateway reset the stream: " + reset.errorCode()));
      } else {
        io.netty.util.ReferenceCountUtil.release(msg);
      }
    }

    private void pause(ChannelHandlerContext ctx) {
      pausing = true;
      paused = true;
      pausedNanoTime = System.nanoTime();
      pausedEpochNanos = FakeEngine.epochNanos();
      ctx.executor()
          .schedule(
              () -> {
                resumedEpochNanos = FakeEngine.epochNanos();
                pauseNanos = System.nanoTime() - pausedNanoTime;
                pausing = false;
                for (Http2DataFrame frame : unconsumed) {
                  consume(ctx, frame);
                }
                unconsumed.clear();
                if (ended) {
                  complete();
                }
              },
              pauseMillis,
              TimeUnit.MILLISECONDS);
    }

    /** Returns the frame's bytes to the server's windows, and releases it. */
    private static void consume(ChannelHandlerContext ctx, Http2DataFrame data) {
      int flowControlled = data.initialFlowControlledBytes();
      Http2FrameStream stream = data.stream();
      data.release();
      if (flowControlled > 0) {
        ctx.writeAndFlush(new DefaultHttp2WindowUpdateFrame(flowControlled).stream(stream));
      }
    }

    private void keepTail(ByteBuf content) {
      byte[] read = new byte[content.readableBytes()];
      content.getBytes(content.readerIndex(), read);
      tail = BackpressureIT.lastBytes(tail, read, read.length, 256);
    }

    private void finish() {
      ended = true;
      if (!pausing) {
        complete();
      }
    }

    private void complete() {
      done.complete(
          new Read(
              status,
              BackpressureIT.indexOf(tail, DONE) >= 0,
              pauseNanos,
              pausedEpochNanos,
              resumedEpochNanos,
              bytes));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
      done.completeExceptionally(
          new AssertionError("the gateway closed the connection after " + bytes + " bytes"));
      super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      done.completeExceptionally(cause);
      ctx.close();
    }
  }
}
