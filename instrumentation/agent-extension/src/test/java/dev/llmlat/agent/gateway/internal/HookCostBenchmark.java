package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpans;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * CPU the gateway hooks add to one streamed chat completion, in process: a SERVER span made the
 * local root as the agent does, the request body read through {@link JdkObservedRequestBody}, the
 * engine's SSE response (8 chunks and [DONE]) received by the JDK HttpClient through {@link
 * JdkUpstreamBodyHandler} under a CLIENT span that ends at the headers (as the agent ends it), the
 * same response written and flushed through {@link JdkObservedResponseBody}, then closed; against
 * the same spans and stream calls without the hooks, alternately in one run. What {@code llmlat
 * bench agent} cannot resolve within its noise (a few microseconds against a request's ~450 us of
 * gateway CPU). Run: {@code mvn -pl instrumentation/agent-extension test -Dtest=HookCostBenchmark
 * -Dllmlat.bench=true -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@EnabledIfSystemProperty(named = "llmlat.bench", matches = "true")
class HookCostBenchmark {
  private static final byte[] REQUEST =
      ("{\"model\":\"m\",\"stream\":true,\"max_tokens\":8,"
              + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
          .getBytes(StandardCharsets.UTF_8);
  private static final byte[] RESPONSE = sse();
  private static final HttpRequest UPSTREAM =
      HttpRequest.newBuilder(URI.create("http://engine:8000/v1/chat/completions"))
          .POST(HttpRequest.BodyPublishers.noBody())
          .build();
  private static final HttpResponse.ResponseInfo UPSTREAM_SSE =
      new HttpResponse.ResponseInfo() {
        private final java.net.http.HttpHeaders headers =
            java.net.http.HttpHeaders.of(
                java.util.Map.of("content-type", List.of("text/event-stream")), (a, b) -> true);

        @Override
        public int statusCode() {
          return 200;
        }

        @Override
        public java.net.http.HttpHeaders headers() {
          return headers;
        }

        @Override
        public HttpClient.Version version() {
          return HttpClient.Version.HTTP_1_1;
        }
      };

  @Test
  void hooksCostPerRequest() throws Exception {
    try (SdkTracerProvider tracing = SdkTracerProvider.builder().build()) {
      Tracer tracer = tracing.get("io.opentelemetry.java-http-server");
      int requests = Integer.getInteger("llmlat.bench.requests", 200_000);
      int rounds = Integer.getInteger("llmlat.bench.rounds", 15);
      double[] hooked = new double[rounds];
      double[] plain = new double[rounds];
      for (int round = -5; round < rounds; round++) { // 5 warm-up rounds
        long t0 = System.nanoTime();
        for (int i = 0; i < requests; i++) {
          request(tracer, true);
        }
        long t1 = System.nanoTime();
        for (int i = 0; i < requests; i++) {
          request(tracer, false);
        }
        long t2 = System.nanoTime();
        if (round >= 0) {
          hooked[round] = (t1 - t0) / 1e3 / requests;
          plain[round] = (t2 - t1) / 1e3 / requests;
        }
      }
      double h = median(hooked);
      double p = median(plain);
      System.out.printf(
          Locale.ROOT,
          "hook cost, median of %d rounds x %d requests: with hooks %.2f us/request,"
              + " span and streams alone %.2f us/request: the hooks add %.2f us/request%n",
          rounds,
          requests,
          h,
          p,
          h - p);
      // what was timed did the hooks' work: the span carries the request's attributes and the
      // chunks
      SpanData hookedSpan = ((ReadableSpan) request(tracer, true)).toSpanData();
      assertThat(hookedSpan.getAttributes().get(GatewayExchange.MODEL)).isEqualTo("m");
      assertThat(hookedSpan.getAttributes().get(GatewayExchange.CHUNKS))
          .isEqualTo(8L); // [DONE] is no content
      assertThat(hookedSpan.getEvents())
          .extracting(e -> e.getName())
          .containsExactly("llmlat.upstream.first_chunk", "gen_ai.first_chunk");
    }
  }

  private static Span request(Tracer tracer, boolean hooks) throws Exception {
    Span span =
        tracer.spanBuilder("POST /v1/chat/completions").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope scope = LocalRootSpans.store(Context.current().with(span), span).makeCurrent()) {
      InputStream in = new ByteArrayInputStream(REQUEST);
      OutputStream out = new ByteArrayOutputStream(RESPONSE.length);
      if (hooks) {
        GatewayExchange exchange =
            new GatewayExchange(
                OpenAiEndpoint.CHAT_COMPLETIONS,
                SseExchange.INSTANCE.getRequestHeaders()::getFirst);
        in = new JdkObservedRequestBody(in, exchange);
        out = new JdkObservedResponseBody(out, SseExchange.INSTANCE, exchange);
      }
      byte[] buffer = new byte[1024];
      while (in.read(buffer, 0, buffer.length) > 0) {
        // the application reads the whole body
      }
      receiveUpstream(tracer, hooks);
      out.write(RESPONSE, 0, RESPONSE.length);
      out.flush();
      out.close();
    } finally {
      span.end();
    }
    return span;
  }

  /**
   * The engine's response as the JDK client delivers it (one buffer per event) to a discarding
   * subscriber.
   */
  private static void receiveUpstream(Tracer tracer, boolean hooks) {
    Span client = tracer.spanBuilder("POST").setSpanKind(SpanKind.CLIENT).startSpan();
    HttpResponse.BodyHandler<Void> handler = HttpResponse.BodyHandlers.discarding();
    if (hooks) {
      try (Scope ignored = Context.current().with(client).makeCurrent()) {
        handler = JdkUpstreamBodyHandler.observe(UPSTREAM, handler);
      }
    }
    HttpResponse.BodySubscriber<Void> subscriber = handler.apply(UPSTREAM_SSE);
    client.end();
    subscriber.onSubscribe(NO_SUBSCRIPTION);
    int eventLength = RESPONSE.length / 9 + 1; // 8 chunks and [DONE], about
    for (int offset = 0; offset < RESPONSE.length; offset += eventLength) {
      subscriber.onNext(
          List.of(
              ByteBuffer.wrap(RESPONSE, offset, Math.min(eventLength, RESPONSE.length - offset))));
    }
    subscriber.onComplete();
  }

  private static final Flow.Subscription NO_SUBSCRIPTION =
      new Flow.Subscription() {
        @Override
        public void request(long n) {}

        @Override
        public void cancel() {}
      };

  private static byte[] sse() {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      s.append("data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n");
    }
    return s.append("data: [DONE]\n\n").toString().getBytes(StandardCharsets.UTF_8);
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  /** The response headers a JDK server exchange shows once an SSE response has started. */
  private static final class SseExchange extends HttpExchange {
    static final SseExchange INSTANCE = new SseExchange();
    private final Headers response = new Headers();

    SseExchange() {
      response.set("Content-Type", "text/event-stream");
      response.set("Transfer-encoding", "chunked");
    }

    @Override
    public Headers getRequestHeaders() {
      return new Headers();
    }

    @Override
    public Headers getResponseHeaders() {
      return response;
    }

    @Override
    public URI getRequestURI() {
      return URI.create("/v1/chat/completions");
    }

    @Override
    public String getRequestMethod() {
      return "POST";
    }

    @Override
    public HttpContext getHttpContext() {
      return null;
    }

    @Override
    public void close() {}

    @Override
    public InputStream getRequestBody() {
      return null;
    }

    @Override
    public OutputStream getResponseBody() {
      return null;
    }

    @Override
    public void sendResponseHeaders(int code, long length) {}

    @Override
    public InetSocketAddress getRemoteAddress() {
      return null;
    }

    @Override
    public int getResponseCode() {
      return 200;
    }

    @Override
    public InetSocketAddress getLocalAddress() {
      return null;
    }

    @Override
    public String getProtocol() {
      return "HTTP/1.1";
    }

    @Override
    public Object getAttribute(String name) {
      return null;
    }

    @Override
    public void setAttribute(String name, Object value) {}

    @Override
    public void setStreams(InputStream i, OutputStream o) {}

    @Override
    public HttpPrincipal getPrincipal() {
      return null;
    }
  }
}
