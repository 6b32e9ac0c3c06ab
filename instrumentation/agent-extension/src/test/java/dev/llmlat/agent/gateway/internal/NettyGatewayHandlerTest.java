package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpans;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link NettyGatewayHandler} in an embedded channel, no agent: the request arrives while its
 * SERVER span is current (as the agent's tracing handler arranges), the response is written outside
 * any context (as on an event loop). Messages pass unchanged: same objects, same indexes, same
 * reference counts.
 */
class NettyGatewayHandlerTest {
  private static final String BODY =
      "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"secret\"}],"
          + "\"stream\":true,\"max_tokens\":8}";
  private static final String EVENT = "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n";

  private final SdkTracerProvider tracing = SdkTracerProvider.builder().build();
  private EmbeddedChannel channel = new EmbeddedChannel(new NettyGatewayHandler());

  @AfterEach
  void close() {
    channel.finishAndReleaseAll();
    tracing.close();
  }

  @Test
  void followsTheServerCodecOnce() {
    EmbeddedChannel server = new EmbeddedChannel();
    HttpServerCodec codec = new HttpServerCodec();
    server.pipeline().addLast("codec", codec).addLast("app", new DefaultChannelHandlerStub());
    NettyGatewayHandler.addAfterServerCodec(server.pipeline(), codec);
    NettyGatewayHandler.addAfterServerCodec(server.pipeline(), codec);
    assertThat(server.pipeline().names()).startsWith("codec", NettyGatewayHandler.NAME, "app");
    assertThat(server.pipeline().names()).filteredOn(NettyGatewayHandler.NAME::equals).hasSize(1);
    server.finishAndReleaseAll();
  }

  @Test
  void streamedChatGetsRequestAttributesFirstChunkAndChunkCount() {
    Span span = request(HttpMethod.POST, "/openai/v1/chat/completions?api-version=1", BODY);
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
    HttpUtil.setTransferEncodingChunked(head, true);
    writeUnchanged(new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
    writeUnchanged(head);
    long beforeFirst = now();
    writeUnchanged(
        Unpooled.copiedBuffer(
            EVENT, StandardCharsets.UTF_8)); // raw buffer, as Reactor Netty writes
    long afterFirst = now();
    writeUnchanged(
        new DefaultHttpContent(
            Unpooled.directBuffer().writeBytes(EVENT.getBytes(StandardCharsets.UTF_8))));
    writeUnchanged(
        new DefaultHttpContent(Unpooled.copiedBuffer("data: [DONE]\n\n", StandardCharsets.UTF_8)));
    writeUnchanged(LastHttpContent.EMPTY_LAST_CONTENT);
    span.end();

    SpanData data = ((ReadableSpan) span).toSpanData();
    assertThat(data.getAttributes().get(GatewayExchange.OPERATION)).isEqualTo("chat");
    assertThat(data.getAttributes().get(GatewayExchange.MODEL)).isEqualTo("m");
    assertThat(data.getAttributes().get(GatewayExchange.STREAM)).isTrue();
    assertThat(data.getAttributes().get(GatewayExchange.MAX_TOKENS)).isEqualTo(8L);
    assertThat(data.getAttributes().get(GatewayExchange.CHUNKS)).isEqualTo(2L);
    assertThat(data.getAttributes().get(GatewayExchange.FIRST_CHUNK_NS))
        .isBetween(beforeFirst, afterFirst);
    assertThat(data.getEvents())
        .singleElement()
        .satisfies(
            e ->
                assertThat(e.getEpochNanos())
                    .isEqualTo(data.getAttributes().get(GatewayExchange.FIRST_CHUNK_NS)));
    assertThat(data.getAttributes().asMap().values())
        .noneMatch(v -> v.toString().contains("secret"));
  }

  @Test
  void dataFramesOnAnHttp2StreamAreContentAndTheLastOneEndsTheResponse() {
    channel.finishAndReleaseAll();
    channel = new EmbeddedChannel(new NettyGatewayHandler(true));
    Span span = request(HttpMethod.POST, "/v1/chat/completions", BODY);
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
    writeUnchanged(head);
    long beforeFirst = now();
    writeUnchanged(new DefaultHttp2DataFrame(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8)));
    long afterFirst = now();
    writeUnchanged(
        new DefaultHttp2DataFrame(
            Unpooled.copiedBuffer(EVENT + "data: [DONE]\n\n", StandardCharsets.UTF_8), true));
    // after the stream's end: no longer the exchange's
    writeUnchanged(new DefaultHttp2DataFrame(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8)));
    span.end();

    SpanData data = ((ReadableSpan) span).toSpanData();
    // two content events ([DONE] is none), none after the end
    assertThat(data.getAttributes().get(GatewayExchange.CHUNKS)).isEqualTo(2L);
    assertThat(data.getAttributes().get(GatewayExchange.FIRST_CHUNK_NS))
        .isBetween(beforeFirst, afterFirst);
  }

  @Test
  void fullResponseIsNotStreamedAndOtherRequestsAreNotObserved() {
    Span completion =
        request(HttpMethod.POST, "/v1/completions", "{\"model\":\"m\",\"prompt\":\"p\"}");
    DefaultFullHttpResponse full =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1,
            HttpResponseStatus.OK,
            Unpooled.copiedBuffer("{\"choices\":[]}", StandardCharsets.UTF_8));
    full.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json");
    writeUnchanged(full);
    completion.end();
    SpanData data = ((ReadableSpan) completion).toSpanData();
    assertThat(data.getAttributes().get(GatewayExchange.OPERATION)).isEqualTo("text_completion");
    assertThat(data.getAttributes().get(GatewayExchange.CHUNKS)).isNull();
    assertThat(data.getEvents()).isEmpty();

    for (HttpMethod method : new HttpMethod[] {HttpMethod.GET, HttpMethod.POST}) {
      Span other =
          request(
              method, method == HttpMethod.GET ? "/v1/chat/completions" : "/v1/embeddings", BODY);
      HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
      head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
      writeUnchanged(head);
      writeUnchanged(
          new DefaultLastHttpContent(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8)));
      other.end();
      assertThat(((ReadableSpan) other).toSpanData().getAttributes().isEmpty()).isTrue();
    }
  }

  @Test
  void requestOutsideAServerSpanIsNotObserved() {
    channel.writeInbound(
        new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v1/chat/completions"));
    Span unrelated = tracing.get("t").spanBuilder("other").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope ignored =
        LocalRootSpans.store(Context.root().with(unrelated), unrelated).makeCurrent()) {
      // a later write that happens to run inside another request's context
      HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
      head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
      writeUnchanged(head);
      writeUnchanged(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8));
    }
    unrelated.end();
    assertThat(((ReadableSpan) unrelated).toSpanData().getAttributes().isEmpty()).isTrue();
    channel.readInbound();
  }

  @Test
  void unwritableClientIntervalsBecomeBackpressureEvents() {
    Span span = request(HttpMethod.POST, "/v1/chat/completions", BODY);
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
    writeUnchanged(head);
    channel
        .config()
        .setWriteBufferWaterMark(new WriteBufferWaterMark(EVENT.length(), 2 * EVENT.length()));
    long[] starts = new long[2];
    long[] ends = new long[2];
    for (int i = 0; i < 2; i++) {
      // written, not flushed: the bytes pend in the channel until over the high-water mark
      starts[i] = now();
      for (int k = 0; k < 3 && channel.isWritable(); k++) {
        channel.write(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8));
      }
      assertThat(channel.isWritable()).isFalse();
      channel.flush(); // the client took them: writable again
      ends[i] = now();
      assertThat(channel.isWritable()).isTrue();
      for (Object out; (out = channel.readOutbound()) != null; ) {
        ((ByteBuf) out).release();
      }
    }
    channel.config().setWriteBufferWaterMark(WriteBufferWaterMark.DEFAULT);
    writeUnchanged(LastHttpContent.EMPTY_LAST_CONTENT);
    span.end();

    SpanData data = ((ReadableSpan) span).toSpanData();
    java.util.List<io.opentelemetry.sdk.trace.data.EventData> blocked =
        data.getEvents().stream()
            .filter(
                e ->
                    e.getName()
                        .equals(dev.llmlat.semconv.LlmlatAttributes.EVENT_GATEWAY_BACKPRESSURE))
            .toList();
    assertThat(blocked).hasSize(2);
    long total = 0;
    for (int i = 0; i < 2; i++) {
      io.opentelemetry.sdk.trace.data.EventData e = blocked.get(i);
      long duration = e.getAttributes().get(GatewayExchange.BACKPRESSURE_DURATION_NS);
      assertThat(e.getEpochNanos()).isBetween(starts[i], ends[i]);
      assertThat(duration).isBetween(0L, ends[i] - starts[i]);
      assertThat(e.getAttributes().get(GatewayExchange.BACKPRESSURE_CAUSE))
          .as("an HTTP/1.x channel waits only for its socket")
          .isEqualTo("socket");
      total += duration;
    }
    assertThat(data.getAttributes().get(GatewayExchange.BACKPRESSURE_COUNT)).isEqualTo(2L);
    assertThat(data.getAttributes().get(GatewayExchange.BACKPRESSURE_TOTAL_NS)).isEqualTo(total);
  }

  @Test
  void writableClientGetsACountOfZeroAndAClientLeavingUnwritableEndsTheInterval() {
    Span calm = request(HttpMethod.POST, "/v1/chat/completions", BODY);
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
    writeUnchanged(head);
    writeUnchanged(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8));
    writeUnchanged(LastHttpContent.EMPTY_LAST_CONTENT);
    calm.end();
    SpanData calmData = ((ReadableSpan) calm).toSpanData();
    assertThat(calmData.getAttributes().get(GatewayExchange.BACKPRESSURE_COUNT))
        .as("observed, none")
        .isZero();
    assertThat(calmData.getAttributes().get(GatewayExchange.BACKPRESSURE_TOTAL_NS)).isNull();

    Span left = request(HttpMethod.POST, "/v1/chat/completions", BODY);
    HttpResponse again = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    again.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
    writeUnchanged(again);
    channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1, 2));
    long start = now();
    channel.write(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8));
    assertThat(channel.isWritable()).isFalse();
    channel.close(); // the client went away while the gateway could not write to it
    long end = now();
    left.end();
    SpanData leftData = ((ReadableSpan) left).toSpanData();
    assertThat(leftData.getAttributes().get(GatewayExchange.BACKPRESSURE_COUNT)).isEqualTo(1L);
    assertThat(leftData.getAttributes().get(GatewayExchange.BACKPRESSURE_TOTAL_NS))
        .isBetween(0L, end - start);
  }

  @Test
  void pathOfRequestTargets() {
    assertThat(NettyGatewayHandler.path("/v1/chat/completions?x=http://a/b"))
        .isEqualTo("/v1/chat/completions");
    assertThat(NettyGatewayHandler.path("http://gw:8080/v1/completions#f"))
        .isEqualTo("/v1/completions");
    assertThat(NettyGatewayHandler.path("http://gw:8080")).isEqualTo("/");
    assertThat(NettyGatewayHandler.path("*")).isEqualTo("/");
  }

  /** Starts a SERVER span and reads the request through the handler inside it; returns the span. */
  private Span request(HttpMethod method, String uri, String body) {
    Span span =
        tracing
            .get("io.opentelemetry.netty-4.1")
            .spanBuilder("POST")
            .setSpanKind(SpanKind.SERVER)
            .startSpan();
    try (Scope ignored = LocalRootSpans.store(Context.root().with(span), span).makeCurrent()) {
      Object[] inbound = {
        new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, uri),
        new DefaultHttpContent(
            Unpooled.copiedBuffer(body.substring(0, 20), StandardCharsets.UTF_8)),
        new DefaultLastHttpContent(
            Unpooled.directBuffer().writeBytes(body.substring(20).getBytes(StandardCharsets.UTF_8)))
      };
      for (Object message : inbound) {
        int readable =
            message instanceof DefaultHttpContent
                ? ((DefaultHttpContent) message).content().readableBytes()
                : -1;
        channel.writeInbound(message);
        Object passed = channel.readInbound();
        assertThat(passed).isSameAs(message);
        if (readable >= 0) {
          assertThat(((DefaultHttpContent) passed).content().readableBytes()).isEqualTo(readable);
          ((DefaultHttpContent) passed).release();
        }
      }
    }
    return span;
  }

  /** Writes and flushes one message; checks it left the handler as it came. */
  private void writeUnchanged(Object message) {
    ByteBuf content =
        message instanceof ByteBuf
            ? (ByteBuf) message
            : message instanceof DefaultHttpContent
                ? ((DefaultHttpContent) message).content()
                : message instanceof DefaultFullHttpResponse
                    ? ((DefaultFullHttpResponse) message).content()
                    : message instanceof DefaultHttp2DataFrame
                        ? ((DefaultHttp2DataFrame) message).content()
                        : null;
    int readerIndex = content == null ? 0 : content.readerIndex();
    int readable = content == null ? 0 : content.readableBytes();
    channel.writeOutbound(message);
    Object passed = channel.readOutbound();
    assertThat(passed).isSameAs(message);
    if (content != null) {
      assertThat(content.refCnt()).isEqualTo(1);
      assertThat(content.readerIndex()).isEqualTo(readerIndex);
      assertThat(content.readableBytes()).isEqualTo(readable);
      content.release();
    }
  }

  private static long now() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** An application handler after the codec. */
  private static final class DefaultChannelHandlerStub
      extends io.netty.channel.ChannelInboundHandlerAdapter {}
}
