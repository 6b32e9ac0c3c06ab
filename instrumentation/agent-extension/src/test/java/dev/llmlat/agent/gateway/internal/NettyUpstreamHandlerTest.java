package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpans;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link NettyUpstreamHandler} in an embedded client channel, no agent: the request is written
 * inside its CLIENT span (child of the gateway's SERVER span) and carries that span's traceparent;
 * the response arrives outside any context, as on an event loop. Messages pass unchanged.
 */
class NettyUpstreamHandlerTest {
  private static final String EVENT = "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n";

  private final SdkTracerProvider tracing = SdkTracerProvider.builder().build();
  private final EmbeddedChannel channel = new EmbeddedChannel(new NettyUpstreamHandler());
  private Span server;
  private Span client;

  @AfterEach
  void close() {
    channel.finishAndReleaseAll();
    tracing.close();
  }

  @Test
  void followsTheClientCodecOnce() {
    EmbeddedChannel upstream = new EmbeddedChannel();
    HttpClientCodec codec = new HttpClientCodec();
    upstream.pipeline().addLast("codec", codec);
    NettyUpstreamHandler.addAfterClientCodec(upstream.pipeline(), codec);
    NettyUpstreamHandler.addAfterClientCodec(upstream.pipeline(), codec);
    assertThat(upstream.pipeline().names()).startsWith("codec", NettyUpstreamHandler.NAME);
    assertThat(upstream.pipeline().names())
        .filteredOn(NettyUpstreamHandler.NAME::equals)
        .hasSize(1);
    upstream.finishAndReleaseAll();
  }

  @Test
  void firstDataEventReceivedGoesOnTheClientAndServerSpans() {
    send(HttpMethod.POST, "/v1/chat/completions", true);
    receive(response("text/event-stream"));
    receive(
        new DefaultHttpContent(Unpooled.copiedBuffer(": keep-alive\n\n", StandardCharsets.UTF_8)));
    receive(
        new DefaultHttpContent(
            Unpooled.copiedBuffer(EVENT.substring(0, 10), StandardCharsets.UTF_8)));
    long before = now();
    receive(
        new DefaultHttpContent(
            Unpooled.directBuffer()
                .writeBytes(EVENT.substring(10).getBytes(StandardCharsets.UTF_8))));
    long after = now();
    receive(new DefaultHttpContent(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8)));
    receive(
        new DefaultLastHttpContent(
            Unpooled.copiedBuffer("data: [DONE]\n\n", StandardCharsets.UTF_8)));
    client.end();
    server.end();

    List<EventData> onClient = events(client);
    assertThat(onClient)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getName()).isEqualTo("llmlat.upstream.first_chunk");
              assertThat(e.getEpochNanos()).isBetween(before, after);
              assertThat(e.getAttributes().isEmpty()).isTrue();
            });
    assertThat(events(server))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getName()).isEqualTo("llmlat.upstream.first_chunk");
              assertThat(e.getEpochNanos()).isEqualTo(onClient.get(0).getEpochNanos());
              assertThat(e.getAttributes().get(UpstreamExchange.SPAN_ID))
                  .isEqualTo(client.getSpanContext().getSpanId());
            });
  }

  @Test
  void bodiesOfKnownLengthAndOtherRequestsAreNotObserved() {
    send(HttpMethod.POST, "/v1/completions", true);
    HttpResponse plain = response("application/json");
    plain.headers().set(HttpHeaderNames.CONTENT_LENGTH, EVENT.length());
    receive(plain);
    receive(new DefaultLastHttpContent(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8)));
    for (String path : new String[] {"/v1/embeddings", "/v1/chat/completions"}) {
      send(path.endsWith("embeddings") ? HttpMethod.POST : HttpMethod.GET, path, true);
      receive(response("text/event-stream"));
      receive(new DefaultLastHttpContent(Unpooled.copiedBuffer(EVENT, StandardCharsets.UTF_8)));
    }
    client.end();
    server.end();
    assertThat(events(client)).isEmpty();
    assertThat(events(server)).isEmpty();
  }

  @Test
  void chunkedBodyWithoutTraceparentGoesOnTheServerSpanOnly() {
    send(HttpMethod.POST, "/v1/chat/completions", false);
    receive(response("application/x-ndjson"));
    receive(new DefaultHttpContent(Unpooled.copiedBuffer("{\"a\":1}\n", StandardCharsets.UTF_8)));
    client.end();
    server.end();
    // without traceparent, the CLIENT span cannot be told from the contexts seen: only the root is
    // sure
    assertThat(events(client)).isEmpty();
    assertThat(events(server))
        .singleElement()
        .satisfies(e -> assertThat(e.getAttributes().isEmpty()).isTrue());
  }

  @Test
  void parentIdOfTraceparent() {
    assertThat(UpstreamExchange.parentId("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        .isEqualTo("b7ad6b7169203331");
    assertThat(UpstreamExchange.parentId("00-0af7651916cd43dd8448eb211c80319c")).isNull();
    assertThat(UpstreamExchange.parentId(null)).isNull();
  }

  /** Writes a request inside a CLIENT span under a SERVER span (new ones per call). */
  private void send(HttpMethod method, String path, boolean traceparent) {
    if (server == null) {
      server = tracing.get("t").spanBuilder("POST").setSpanKind(SpanKind.SERVER).startSpan();
    }
    Context serverContext = LocalRootSpans.store(Context.root().with(server), server);
    client =
        tracing
            .get("t")
            .spanBuilder("POST")
            .setSpanKind(SpanKind.CLIENT)
            .setParent(serverContext)
            .startSpan();
    HttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, method, path);
    if (traceparent) {
      request
          .headers()
          .set(
              "traceparent",
              "00-"
                  + client.getSpanContext().getTraceId()
                  + "-"
                  + client.getSpanContext().getSpanId()
                  + "-01");
    }
    try (Scope ignored = serverContext.with(client).makeCurrent()) {
      channel.writeOutbound(request);
    }
    assertThat((Object) channel.readOutbound()).isSameAs(request);
  }

  private void receive(Object message) {
    channel.writeInbound(message);
    Object passed = channel.readInbound();
    assertThat(passed).isSameAs(message);
    if (message instanceof DefaultHttpContent || message instanceof LastHttpContent) {
      assertThat(((io.netty.handler.codec.http.HttpContent) message).content().readerIndex())
          .isZero();
      ((io.netty.handler.codec.http.HttpContent) message).release();
    }
  }

  private static HttpResponse response(String contentType) {
    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    head.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    return head;
  }

  private static List<EventData> events(Span span) {
    return ((ReadableSpan) span).toSpanData().getEvents();
  }

  private static long now() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }
}
