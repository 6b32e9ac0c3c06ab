package dev.llmlat.agent.gateway.internal;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;

/**
 * One per HTTP/1.x client channel on Netty 4.1/4.2 (Reactor Netty's client under Spring WebFlux and
 * Spring Cloud Gateway, Vert.x's client): sees the engine's response as it is decoded, i.e. as the
 * gateway receives it, and records its first content chunk ({@link UpstreamExchange}). Called on
 * the channel's event loop only.
 *
 * <p>The call's CLIENT span is not current there. It is found among the contexts the agent's Netty
 * instrumentation keeps on the channel (Reactor Netty's instrumentation puts its CLIENT span's
 * context there before each request) and the one current when the request was written: the one
 * whose span id is the parent id in the {@code traceparent} the request carried.
 *
 * <p>It also sees the channel's own set-up (its connect, and the TLS handshake of an {@link
 * SslHandler} before it) and is handed the pool acquisition that got the channel for the next
 * request ({@link ReactorNettyAcquire}): as that request is written, the acquisition, the set-up
 * (to the channel's first request only) and the request written go on the gateway's root span
 * ({@link UpstreamConnection}), naming the CLIENT span of the request's {@code traceparent}.
 */
public final class NettyUpstreamHandler extends ChannelDuplexHandler {
  public static final String NAME = "llmlat.upstream";

  /**
   * Headers of the OpenAI-style request in flight (the agent injects traceparent into them); else
   * null.
   */
  private HttpHeaders request;

  private Context writeContext;

  /** The response being received; null when it is not observed. */
  private UpstreamExchange exchange;

  /** Handed from the pool's thread: the acquisition that got this channel for the next request. */
  private volatile UpstreamConnection acquiredFor;

  /** The call whose request is being written (until its last content); null when not recorded. */
  private UpstreamConnection writing;

  /** The call recorded, not yet on a span (its root was not found as its request was written). */
  private UpstreamConnection unattached;

  private String unattachedSpanId;

  /** The channel's set-up, epoch nanos (0: not seen); given to the channel's first request. */
  private long connectStart;

  private long connected;
  private long tlsStart;
  private long tlsDone;

  /** Read from the thread that hands an acquisition over (Vert.x's lease). */
  private volatile boolean firstRequestWritten;

  /**
   * Called after any handler is added to a pipeline: follows an HTTP client codec with this
   * handler.
   */
  public static void addAfterClientCodec(ChannelPipeline pipeline, ChannelHandler added) {
    if (!(added instanceof HttpClientCodec || added instanceof HttpRequestEncoder)
        || pipeline.get(NAME) != null) {
      return;
    }
    ChannelHandlerContext codec = pipeline.context(added);
    if (codec != null) {
      pipeline.addAfter(codec.name(), NAME, new NettyUpstreamHandler());
    }
  }

  /** Hands {@code channel}'s handler the acquisition that got the channel (from any thread). */
  public static void acquired(Channel channel, UpstreamConnection connection) {
    ChannelHandler handler = channel.pipeline().get(NAME);
    if (handler instanceof NettyUpstreamHandler) {
      ((NettyUpstreamHandler) handler).acquiredFor = connection;
    }
  }

  /**
   * Whether a request went over {@code channel} before (null when no handler follows its codec).
   */
  static Boolean servedRequests(Channel channel) {
    ChannelHandler handler = channel.pipeline().get(NAME);
    return handler instanceof NettyUpstreamHandler
        ? ((NettyUpstreamHandler) handler).firstRequestWritten
        : null;
  }

  /**
   * A client pool's key for {@code channel}'s destination, its remote address, as
   * scheme://host:port.
   */
  static String pool(Channel channel) {
    SocketAddress remote = channel.remoteAddress();
    if (!(remote instanceof InetSocketAddress)) {
      return remote == null ? null : remote.toString();
    }
    InetSocketAddress address = (InetSocketAddress) remote;
    String scheme = isSecure(channel) ? "https" : "http";
    return scheme + "://" + address.getHostString() + ":" + address.getPort();
  }

  /** Whether the channel speaks TLS (an SslHandler in its pipeline). */
  static boolean isSecure(Channel channel) {
    return channel.pipeline().get(SslHandler.class) != null;
  }

  @Override
  public void connect(
      ChannelHandlerContext ctx, SocketAddress remote, SocketAddress local, ChannelPromise promise)
      throws Exception {
    connectStart = UpstreamConnection.epochNanos();
    // timed as the connect completes, before the caller's listeners run (a pool hands the channel
    // on in them)
    ChannelPromise connecting = ctx.newPromise();
    connecting.addListener(
        done -> {
          if (done.isSuccess()) {
            connected = UpstreamConnection.epochNanos();
            promise.trySuccess();
          } else if (done.isCancelled()) {
            promise.cancel(false);
          } else {
            promise.tryFailure(done.cause());
          }
        });
    promise.addListener(
        done -> {
          if (done.isCancelled()) {
            connecting.cancel(false);
          }
        });
    ctx.connect(remote, local, connecting);
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    if (connected != 0 && isSecure(ctx.channel())) {
      tlsStart =
          UpstreamConnection
              .epochNanos(); // the SslHandler before this one starts its handshake now
    }
    ctx.fireChannelActive();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof SslHandshakeCompletionEvent
        && tlsStart != 0
        && tlsDone == 0
        && ((SslHandshakeCompletionEvent) evt).isSuccess()) {
      tlsDone = UpstreamConnection.epochNanos();
    }
    ctx.fireUserEventTriggered(evt);
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise)
      throws Exception {
    if (msg instanceof HttpRequest) {
      HttpRequest sent = (HttpRequest) msg;
      boolean observed =
          HttpMethod.POST.equals(sent.method())
              && OpenAiEndpoint.forPath(NettyGatewayHandler.path(sent.uri())) != null;
      request = observed ? sent.headers() : null;
      writeContext = observed ? Context.current() : null;
      exchange = null;
      UpstreamConnection call = acquiredFor;
      acquiredFor = null;
      boolean first = !firstRequestWritten;
      firstRequestWritten = true;
      call = observed ? call : null;
      writing = call;
      unattached = null;
      ctx.write(msg, promise);
      if (call != null) {
        written(
            call,
            ctx.channel(),
            sent,
            first); // after the write: handlers nearer the socket may add traceparent
      }
    } else {
      ctx.write(msg, promise);
    }
    if (writing != null && msg instanceof LastHttpContent) {
      writing.bodyWritten();
      writing = null;
    }
  }

  /**
   * The head of {@code call}'s request was written: its events go on the root span when it is
   * found.
   */
  private void written(
      UpstreamConnection call, Channel channel, HttpRequest sent, boolean firstOnChannel) {
    long[] setup =
        firstOnChannel && connectStart == 0 ? NettyConnectTimer.takeSetup(channel) : null;
    if (setup != null) { // connected before this handler was added (Vert.x adds the codec then)
      connectStart = setup[0];
      connected = setup[1];
      tlsStart = setup[2];
      tlsDone = setup[3];
    }
    if (firstOnChannel && connectStart != 0) {
      call.connectStart(connectStart);
      if (connected != 0) {
        call.connected(connected);
      }
      if (tlsStart != 0) {
        call.tlsStart(tlsStart);
      }
      if (tlsDone != 0) {
        call.tlsDone(tlsDone);
      }
    }
    call.headersWritten();
    String clientSpanId = UpstreamExchange.parentId(sent.headers().get("traceparent"));
    Span root = root(channel, writeContext);
    if (root != null) {
      call.attach(root, clientSpanId);
    } else {
      unattached = call;
      unattachedSpanId = clientSpanId;
    }
  }

  private static Span root(Channel channel, Context write) {
    Context[] candidates = {
      NettyAgentContexts.clientParent(channel), NettyAgentContexts.client(channel), write
    };
    for (Context candidate : candidates) {
      Span root = candidate == null ? null : LocalRootSpan.fromContextOrNull(candidate);
      if (root != null) {
        return root;
      }
    }
    return null;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof HttpResponse && request != null) {
      HttpResponse response = (HttpResponse) msg;
      if (response.status().code() >= 200) { // 100 Continue and other interim answers carry no body
        if (unattached != null) {
          unattached.attach(root(ctx.channel(), Context.current()), unattachedSpanId);
          unattached = null;
        }
        exchange = start(ctx, response);
        request = null;
        writeContext = null;
      }
    }
    if (exchange != null && msg instanceof HttpContent) {
      observe(((HttpContent) msg).content());
      if (msg instanceof LastHttpContent || !exchange.waiting()) {
        exchange = null;
      }
    }
    ctx.fireChannelRead(msg);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    request = null;
    writeContext = null;
    exchange = null;
    acquiredFor = null;
    writing = null;
    unattached = null;
    ctx.fireChannelInactive();
  }

  private UpstreamExchange start(ChannelHandlerContext ctx, HttpResponse response) {
    String clientSpanId = UpstreamExchange.parentId(request.get("traceparent"));
    Span client = null;
    Span root = null;
    Context[] candidates = {
      NettyAgentContexts.client(ctx.channel()),
      NettyAgentContexts.clientParent(ctx.channel()),
      writeContext,
      Context.current()
    };
    for (Context candidate : candidates) {
      if (candidate == null) {
        continue;
      }
      Span span = Span.fromContext(candidate);
      if (client == null
          && clientSpanId != null
          && clientSpanId.equals(span.getSpanContext().getSpanId())) {
        client = span;
      }
      if (root == null) {
        root = LocalRootSpan.fromContextOrNull(candidate);
      }
    }
    return UpstreamExchange.forResponse(
        client,
        root,
        clientSpanId,
        response.headers().get(HttpHeaderNames.CONTENT_TYPE),
        !(response instanceof LastHttpContent) && !HttpUtil.isContentLengthSet(response));
  }

  /** Shows the readable bytes to the exchange without moving the buffer's indexes. */
  private void observe(ByteBuf bytes) {
    int length = bytes.readableBytes();
    if (length == 0) {
      return;
    }
    if (bytes.hasArray()) {
      exchange.onBytes(bytes.array(), bytes.arrayOffset() + bytes.readerIndex(), length);
    } else if (bytes.nioBufferCount() > 0) {
      for (ByteBuffer region : bytes.nioBuffers(bytes.readerIndex(), length)) {
        exchange.onBytes(region);
      }
    } else {
      byte[] copy = new byte[length]; // a buffer with no array or NIO view: rare
      bytes.getBytes(bytes.readerIndex(), copy);
      exchange.onBytes(copy, 0, length);
    }
  }
}
