package dev.llmlat.agent.gateway.internal;

import dev.llmlat.semconv.LlmlatAttributes;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ServerChannel;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.ByteBuffer;

/**
 * One per HTTP/1.x server channel (Netty 4.1 and 4.2: Reactor Netty, Spring WebFlux and Spring
 * Cloud Gateway, Vert.x, Micronaut), and one per HTTP/2 stream's channel where the server turns its
 * frames into HTTP/1.x objects ({@code Http2StreamFrameToHttpObjectCodec}: Reactor Netty over h2c
 * or h2), right after the agent's server tracing handler. Inbound it sees each request while the
 * agent has the request's SERVER span current; outbound it sees the response objects the
 * application writes, before they are encoded (raw {@code ByteBuf}s are body content too: Reactor
 * Netty writes them, and on an HTTP/2 stream DATA frames). A flush is when written bytes go to the
 * network. The channel's writability turning false (more response bytes pending than its write
 * buffer's high-water mark: the client reads slower than the gateway writes) until true again is
 * the request's backpressure; nothing is done per write for it. Netty calls it on the channel's
 * event loop only, so its state needs no locking. An HTTP/1.x channel's writes wait only for its
 * socket; an HTTP/2 stream's also for its and its connection's flow-control windows, which the
 * block's cause tells apart ({@link NettyHttp2Windows}).
 */
public final class NettyGatewayHandler extends ChannelDuplexHandler {
  public static final String NAME = "llmlat.gateway";

  private static final String HTTP2_STREAM_CODEC =
      "io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec";

  /** An HTTP/2 stream's channel: its blocks' cause is looked up, not always the socket. */
  private final boolean http2Stream;

  /** The request being answered; null unless it is an OpenAI-style POST inside a SERVER span. */
  private GatewayExchange exchange;

  /** The response's last content was written: the exchange ends at the next flush. */
  private boolean responseEnded;

  /** The exchange being answered when the channel turned unwritable; null while writable. */
  private GatewayExchange blocked;

  private long blockedSinceEpochNanos;
  private long blockedSinceNanoTime;
  private String blockedCause;

  public NettyGatewayHandler() {
    this(false);
  }

  NettyGatewayHandler(boolean http2Stream) {
    this.http2Stream = http2Stream;
  }

  /**
   * Called after any handler is added to a pipeline; follows an HTTP server codec with this
   * handler. When the agent's tracing handler already follows the codec, the agent moves this
   * {@code addAfter} behind its own handler; when the agent adds its handler later, it goes right
   * after the codec: either way this handler ends up after the agent's. The agent does not trace
   * HTTP/2 streams: behind a server stream's HTTP/2-to-HTTP/1.x codec this adds the agent's tracing
   * handler itself ({@link AgentNettyServerTracing}), then this one.
   */
  public static void addAfterServerCodec(ChannelPipeline pipeline, ChannelHandler added) {
    boolean http2Stream = isServerStreamCodec(pipeline, added);
    // HttpResponseEncoder: servers that add decoder and encoder separately (Vert.x)
    if (!(http2Stream || added instanceof HttpServerCodec || added instanceof HttpResponseEncoder)
        || pipeline.get(NAME) != null) {
      return;
    }
    ChannelHandlerContext codec = pipeline.context(added);
    if (codec == null) {
      return;
    }
    String before = codec.name();
    if (http2Stream) {
      ChannelHandler tracing = AgentNettyServerTracing.newHandler();
      if (tracing == null) {
        return; // no SERVER span for the stream: nothing to record on
      }
      before = tracing.getClass().getName();
      pipeline.addAfter(codec.name(), before, tracing);
    }
    pipeline.addAfter(before, NAME, new NettyGatewayHandler(http2Stream));
  }

  /**
   * {@code added} is an HTTP/2-to-HTTP/1.x codec on the channel of a stream a client opened to a
   * server (its connection's parent the listening channel); by name: the gateway may have no {@code
   * netty-codec-http2}.
   */
  private static boolean isServerStreamCodec(ChannelPipeline pipeline, ChannelHandler added) {
    if (!HTTP2_STREAM_CODEC.equals(added.getClass().getName())) {
      return false;
    }
    Channel connection = pipeline.channel().parent();
    return connection != null && connection.parent() instanceof ServerChannel;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof HttpRequest) {
      exchange = start((HttpRequest) msg);
      responseEnded = false;
      if (exchange != null) {
        exchange.backpressureObserved();
      }
    }
    if (exchange != null && msg instanceof HttpContent) {
      observe(((HttpContent) msg).content(), true);
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    if (exchange != null) {
      observeResponse(msg);
    }
    ctx.write(msg, promise);
  }

  @Override
  public void flush(ChannelHandlerContext ctx) throws Exception {
    GatewayExchange sending = exchange;
    if (sending != null) {
      // Recorded before the flush, not after: flushing the last content completes the write that
      // ends the SERVER span, and an ended span takes no more attributes.
      sending.onResponseSent(sending.sendingAt());
      if (responseEnded) {
        exchange = null;
      }
    }
    ctx.flush();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (!ctx.channel().isWritable()) {
      if (blocked == null && exchange != null) {
        blocked = exchange;
        blockedSinceNanoTime = System.nanoTime();
        blockedSinceEpochNanos = GatewayExchange.epochNanos();
        blockedCause =
            http2Stream
                ? NettyHttp2Windows.cause(ctx.channel())
                : LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_SOCKET;
      }
    } else {
      unblocked();
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    unblocked(); // a client that left while the gateway could not write to it
    exchange = null;
    ctx.fireChannelInactive();
  }

  /**
   * The channel takes writes again: the interval since it turned unwritable goes to the exchange it
   * held up.
   */
  private void unblocked() {
    GatewayExchange held = blocked;
    if (held != null) {
      blocked = null;
      held.onBackpressure(
          blockedSinceEpochNanos, System.nanoTime() - blockedSinceNanoTime, blockedCause);
    }
  }

  private static GatewayExchange start(HttpRequest request) {
    if (!HttpMethod.POST.equals(request.method())) {
      return null;
    }
    OpenAiEndpoint endpoint = OpenAiEndpoint.forPath(path(request.uri()));
    if (endpoint == null) {
      return null;
    }
    GatewayExchange started = GatewayExchange.inCurrentSpan(endpoint, request.headers()::get);
    return started.hasSpan() ? started : null;
  }

  private void observeResponse(Object msg) {
    if (msg instanceof HttpResponse) {
      HttpResponse response = (HttpResponse) msg;
      if (response.status().code() < 200) {
        return; // 100 Continue and other interim answers carry no body
      }
      // a FullHttpResponse (headers, body and end in one object) is not streamed
      exchange.onResponseHeaders(
          response.headers().get(HttpHeaderNames.CONTENT_TYPE),
          !(msg instanceof LastHttpContent) && !HttpUtil.isContentLengthSet(response));
    }
    if (msg instanceof HttpContent) {
      observe(((HttpContent) msg).content(), false);
    } else if (msg instanceof ByteBuf) {
      observe((ByteBuf) msg, false);
    } else if (http2Stream && NettyHttp2DataFrames.isDataFrame(msg)) {
      // Reactor Netty writes body content as DATA frames, which the stream's codec passes on as
      // they are (Spring WebFlux's writes, e.g.)
      observe(((ByteBufHolder) msg).content(), false);
      if (NettyHttp2DataFrames.endsStream(msg)) {
        responseEnded = true;
      }
    }
    if (msg instanceof LastHttpContent) {
      responseEnded = true;
    }
  }

  /** Shows the readable bytes to the exchange without moving the buffer's indexes. */
  private void observe(ByteBuf bytes, boolean request) {
    int length = bytes.readableBytes();
    if (length == 0) {
      return;
    }
    if (bytes.hasArray()) {
      int offset = bytes.arrayOffset() + bytes.readerIndex();
      if (request) {
        exchange.onRequestBytes(bytes.array(), offset, length);
      } else {
        exchange.onResponseBytes(bytes.array(), offset, length);
      }
      return;
    }
    if (bytes.nioBufferCount() > 0) {
      for (ByteBuffer region : bytes.nioBuffers(bytes.readerIndex(), length)) {
        if (request) {
          exchange.onRequestBytes(region);
        } else {
          exchange.onResponseBytes(region);
        }
      }
      return;
    }
    byte[] copy = new byte[length]; // a buffer with no array or NIO view: rare
    bytes.getBytes(bytes.readerIndex(), copy);
    if (request) {
      exchange.onRequestBytes(copy, 0, length);
    } else {
      exchange.onResponseBytes(copy, 0, length);
    }
  }

  /** The path of a request target: origin-form ({@code /v1/...?q}) or absolute-form. */
  static String path(String uri) {
    int start = 0;
    if (!uri.startsWith("/")) {
      int scheme = uri.indexOf("://");
      start = scheme < 0 ? -1 : uri.indexOf('/', scheme + 3);
      if (start < 0) {
        return "/";
      }
    }
    int end = start;
    while (end < uri.length() && uri.charAt(end) != '?' && uri.charAt(end) != '#') {
      end++;
    }
    return uri.substring(start, end);
  }
}
