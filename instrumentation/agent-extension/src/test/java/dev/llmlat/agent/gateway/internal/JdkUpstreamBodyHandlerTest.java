package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpans;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link JdkUpstreamBodyHandler} without the agent: the call starts inside its CLIENT span (as the
 * agent's java-http-client advice arranges), which ends at the response headers as the agent ends
 * it; the body's first data event then goes on the SERVER span, naming the CLIENT span. The
 * application's subscriber receives exactly what the client delivers.
 */
class JdkUpstreamBodyHandlerTest {
  private static final String EVENT = "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n";

  private final SdkTracerProvider tracing = SdkTracerProvider.builder().build();
  private final Span server =
      tracing.get("t").spanBuilder("POST").setSpanKind(SpanKind.SERVER).startSpan();
  private final Context serverContext = LocalRootSpans.store(Context.root().with(server), server);
  private final Span client =
      tracing
          .get("t")
          .spanBuilder("POST")
          .setSpanKind(SpanKind.CLIENT)
          .setParent(serverContext)
          .startSpan();

  @AfterEach
  void close() {
    tracing.close();
  }

  @Test
  void firstDataEventAfterTheClientSpanEndedGoesOnTheServerSpan() {
    HttpResponse.BodyHandler<List<String>> handler = observe("POST", "/v1/chat/completions");
    assertThat(handler).isInstanceOf(JdkUpstreamBodyHandler.class);
    HttpResponse.BodySubscriber<List<String>> subscriber =
        handler.apply(info(Map.of("content-type", "text/event-stream")));
    client.end(); // as the agent ends it when send() returns with the headers
    subscriber.onSubscribe(new NoSubscription());
    subscriber.onNext(buffers(": ping\n\n", EVENT.substring(0, 12)));
    long before = now();
    subscriber.onNext(buffers(EVENT.substring(12)));
    long after = now();
    subscriber.onNext(buffers(EVENT, "data: [DONE]\n\n"));
    subscriber.onComplete();
    server.end();

    assertThat(subscriber.getBody().toCompletableFuture().join())
        .containsExactly(
            ": ping\n\n", EVENT.substring(0, 12), EVENT.substring(12), EVENT, "data: [DONE]\n\n");
    assertThat(events(client)).isEmpty();
    assertThat(events(server))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getName()).isEqualTo("llmlat.upstream.first_chunk");
              assertThat(e.getEpochNanos()).isBetween(before, after);
              assertThat(e.getAttributes().get(UpstreamExchange.SPAN_ID))
                  .isEqualTo(client.getSpanContext().getSpanId());
            });
  }

  @Test
  void otherCallsAndBodiesOfKnownLengthAreLeftAlone() {
    CollectingHandler plain = new CollectingHandler();
    for (String[] call :
        new String[][] {{"GET", "/v1/chat/completions"}, {"POST", "/v1/embeddings"}}) {
      try (Scope ignored = serverContext.with(client).makeCurrent()) {
        assertThat(JdkUpstreamBodyHandler.observe(request(call[0], call[1]), plain))
            .isSameAs(plain);
      }
    }
    assertThat(JdkUpstreamBodyHandler.observe(request("POST", "/v1/chat/completions"), plain))
        .as("outside any trace")
        .isSameAs(plain);
    HttpResponse.BodySubscriber<List<String>> subscriber =
        observe("POST", "/v1/completions")
            .apply(info(Map.of("content-type", "application/json", "content-length", "12")));
    assertThat(subscriber).isInstanceOf(CollectingSubscriber.class);
  }

  private HttpResponse.BodyHandler<List<String>> observe(String method, String path) {
    try (Scope ignored = serverContext.with(client).makeCurrent()) {
      return JdkUpstreamBodyHandler.observe(request(method, path), new CollectingHandler());
    }
  }

  private static HttpRequest request(String method, String path) {
    return HttpRequest.newBuilder(URI.create("http://engine:8000" + path))
        .method(method, HttpRequest.BodyPublishers.noBody())
        .build();
  }

  private static HttpResponse.ResponseInfo info(Map<String, String> headers) {
    HttpHeaders all =
        HttpHeaders.of(
            headers.entrySet().stream()
                .collect(
                    java.util.stream.Collectors.toMap(
                        Map.Entry::getKey, e -> List.of(e.getValue()))),
            (a, b) -> true);
    return new HttpResponse.ResponseInfo() {
      @Override
      public int statusCode() {
        return 200;
      }

      @Override
      public HttpHeaders headers() {
        return all;
      }

      @Override
      public HttpClient.Version version() {
        return HttpClient.Version.HTTP_1_1;
      }
    };
  }

  private static List<ByteBuffer> buffers(String... parts) {
    return java.util.Arrays.stream(parts)
        .map(p -> ByteBuffer.wrap(p.getBytes(StandardCharsets.UTF_8)))
        .toList();
  }

  private static List<EventData> events(Span span) {
    return ((ReadableSpan) span).toSpanData().getEvents();
  }

  private static long now() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** The application's handler: keeps each buffer's text. */
  private static final class CollectingHandler implements HttpResponse.BodyHandler<List<String>> {
    @Override
    public HttpResponse.BodySubscriber<List<String>> apply(HttpResponse.ResponseInfo info) {
      return new CollectingSubscriber();
    }
  }

  private static final class CollectingSubscriber
      implements HttpResponse.BodySubscriber<List<String>> {
    private final List<String> received = new java.util.ArrayList<>();
    private final java.util.concurrent.CompletableFuture<List<String>> body =
        new java.util.concurrent.CompletableFuture<>();

    @Override
    public java.util.concurrent.CompletionStage<List<String>> getBody() {
      return body;
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {}

    @Override
    public void onNext(List<ByteBuffer> item) {
      item.forEach(b -> received.add(StandardCharsets.UTF_8.decode(b).toString()));
    }

    @Override
    public void onError(Throwable throwable) {
      body.completeExceptionally(throwable);
    }

    @Override
    public void onComplete() {
      body.complete(received);
    }
  }

  private static final class NoSubscription implements Flow.Subscription {
    @Override
    public void request(long n) {}

    @Override
    public void cancel() {}
  }
}
