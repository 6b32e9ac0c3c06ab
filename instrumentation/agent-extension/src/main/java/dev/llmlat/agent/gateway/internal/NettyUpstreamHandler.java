package dev.llmlat.agent.gateway.internal;

import io.netty.buffer.ByteBuf;
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
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
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
 */
public final class NettyUpstreamHandler extends ChannelDuplexHandler {
  public static final String NAME = "llmlat.upstream";

  /** Headers of the OpenAI-style request in flight (the agent injects traceparent into them); else null. */
  private HttpHeaders request;
  private Context writeContext;
  /** The response being received; null when it is not observed. */
  private UpstreamExchange exchange;

  /** Called after any handler is added to a pipeline: follows an HTTP client codec with this handler. */
  public static void addAfterClientCodec(ChannelPipeline pipeline, ChannelHandler added) {
    if (!(added instanceof HttpClientCodec || added instanceof HttpRequestEncoder) || pipeline.get(NAME) != null) {
      return;
    }
    ChannelHandlerContext codec = pipeline.context(added);
    if (codec != null) {
      pipeline.addAfter(codec.name(), NAME, new NettyUpstreamHandler());
    }
  }

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
    if (msg instanceof HttpRequest) {
      HttpRequest sent = (HttpRequest) msg;
      boolean observed = HttpMethod.POST.equals(sent.method())
          && OpenAiEndpoint.forPath(NettyGatewayHandler.path(sent.uri())) != null;
      request = observed ? sent.headers() : null;
      writeContext = observed ? Context.current() : null;
      exchange = null;
    }
    ctx.write(msg, promise);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof HttpResponse && request != null) {
      HttpResponse response = (HttpResponse) msg;
      if (response.status().code() >= 200) { // 100 Continue and other interim answers carry no body
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
    ctx.fireChannelInactive();
  }

  private UpstreamExchange start(ChannelHandlerContext ctx, HttpResponse response) {
    String clientSpanId = UpstreamExchange.parentId(request.get("traceparent"));
    Span client = null;
    Span root = null;
    Context[] candidates = {
      NettyAgentContexts.client(ctx.channel()), NettyAgentContexts.clientParent(ctx.channel()), writeContext, Context.current()
    };
    for (Context candidate : candidates) {
      if (candidate == null) {
        continue;
      }
      Span span = Span.fromContext(candidate);
      if (client == null && clientSpanId != null && clientSpanId.equals(span.getSpanContext().getSpanId())) {
        client = span;
      }
      if (root == null) {
        root = LocalRootSpan.fromContextOrNull(candidate);
      }
    }
    return UpstreamExchange.forResponse(client, root, clientSpanId,
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
