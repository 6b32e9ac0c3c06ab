package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static dev.llmlat.attribution.Spans.id;
import static dev.llmlat.attribution.Spans.span;
import static dev.llmlat.attribution.Spans.trace;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The way in through a gateway split by what its connection hooks saw: the wait for a pooled
 * connection, TCP connect, TLS, and the wire from the request's headers written to the engine's
 * arrival. Expected values are read off each trace's timeline by hand (in the comments).
 */
class UpstreamConnectionTest {
  private static final String T = trace(7);
  private static final String POOL = "http://engine:8000";

  /**
   * The engine side: arrives at {@code arrivalMs}, queues 35 ms, prefills until 480 ms, first token
   * at 490 ms.
   */
  private static List<SpanRecord> engine(double arrivalMs) {
    List<SpanRecord> s = new ArrayList<>();
    s.add(
        span(T, id(3), "llm_request", arrivalMs, 980)
            .kind("Server")
            .parent(id(2))
            .event(LlmlatAttributes.EVENT_FIRST_TOKEN, 490)
            .attr("gen_ai.request.model", "m")
            .build());
    s.add(span(T, id(4), "queue", arrivalMs, arrivalMs + 35).parent(id(3)).build());
    s.add(
        span(T, id(5), "prefill", arrivalMs + 35, 480)
            .parent(id(3))
            .attr(LlmlatAttributes.PREFILL_TOKENS, 100)
            .build());
    return s;
  }

  private static Spans.B server() {
    return span(T, id(1), "POST /v1/chat/completions", 0, 1000)
        .gateway()
        .kind("Server")
        .event(LlmlatAttributes.EVENT_FIRST_CHUNK, 500);
  }

  @Test
  void aClientThatWaitedForItsPoolConnectedAndShookHandsHasEachNamed() {
    // Apache HttpClient 5: the CLIENT span (10..990) holds the lease, then connect and TLS on the
    // new connection
    List<SpanRecord> s = engine(215);
    s.add(server().build());
    s.add(
        span(T, id(2), "POST", 10, 990)
            .gateway()
            .kind("Client")
            .parent(id(1))
            .attr(LlmlatAttributes.UPSTREAM_CLIENT, "apache-httpclient-5")
            .event(
                LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START,
                11,
                Map.of(
                    LlmlatAttributes.UPSTREAM_POOL,
                    POOL,
                    LlmlatAttributes.UPSTREAM_POOL_MAX,
                    "1",
                    LlmlatAttributes.UPSTREAM_POOL_PENDING,
                    "2",
                    LlmlatAttributes.UPSTREAM_POOL_LEASED,
                    "1"))
            .event(
                LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED,
                200,
                Map.of(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED, "false"))
            .event(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START, 201)
            .event(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED, 203)
            .event(LlmlatAttributes.EVENT_UPSTREAM_TLS_START, 203)
            .event(LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE, 208)
            .event(LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN, 209)
            .event(LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN, 210)
            .build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.ttftNs()).isEqualTo(500 * MS);
    assertThat(a.component("upstream_pool_wait")).isEqualTo(189 * MS); // 11..200
    assertThat(a.component("upstream_connect")).isEqualTo(2 * MS); // 201..203
    assertThat(a.component("upstream_tls")).isEqualTo(5 * MS); // 203..208
    assertThat(a.component("gateway_in")).isEqualTo(13 * MS); // 0..11, 200..201, 208..209
    assertThat(a.component("network_in"))
        .isEqualTo(6 * MS); // headers written at 209, engine arrival at 215
    assertThat(a.components().values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(a.ttftNs());
    assertThat(a.upstream().connection()).isEqualTo("new");
    assertThat(a.upstream().poolMax()).isEqualTo(1);
    assertThat(a.criticalPath())
        .filteredOn(p -> p.component().equals("upstream_pool_wait"))
        .singleElement()
        .extracting(Attribution.Segment::span)
        .isEqualTo("pool " + POOL + " (max 1, 2 waiting, 1 in use)");
    assertThat(a.criticalPath())
        .extracting(Attribution.Segment::component)
        .startsWith(
            "gateway_in",
            "upstream_pool_wait",
            "gateway_in",
            "upstream_connect",
            "upstream_tls",
            "gateway_in",
            "network_in",
            "queue");
  }

  @Test
  void aClientThatGetsItsConnectionBeforeItsSpanHasTheWaitOnTheServerSpan() {
    // Reactor Netty: acquisition on the SERVER span (5..400), the CLIENT span starts at 401,
    // headers out at 402
    List<SpanRecord> s = engine(405);
    s.add(
        server()
            .attr(LlmlatAttributes.UPSTREAM_CLIENT, "reactor-netty")
            .event(
                LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START,
                5,
                Map.of(
                    LlmlatAttributes.UPSTREAM_POOL, POOL, LlmlatAttributes.UPSTREAM_POOL_MAX, "1"))
            .event(
                LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED,
                400,
                Map.of(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED, "true"))
            .event(
                LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN,
                402,
                Map.of(LlmlatAttributes.UPSTREAM_SPAN_ID, id(2)))
            .build());
    s.add(span(T, id(2), "POST", 401, 990).gateway().kind("Client").parent(id(1)).build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.component("upstream_pool_wait")).isEqualTo(395 * MS); // 5..400
    assertThat(a.component("gateway_in")).isEqualTo(7 * MS); // 0..5, 400..402
    assertThat(a.component("network_in")).isEqualTo(3 * MS); // 402..405
    assertThat(a.component("upstream_connect") + a.component("upstream_tls")).isZero();
    assertThat(a.upstream().connection()).isEqualTo("reused");
    assertThat(a.upstream().poolLabel()).isEqualTo("pool " + POOL + " (max 1)");
    assertThat(a.notes()).noneMatch(n -> n.startsWith("connection set-up unknown"));
  }

  @Test
  void anotherCallsAcquisitionOnTheServerSpanIsNotThisCallsWait() {
    // a retried call: the first attempt's acquisition names its own CLIENT span (id 8), not the one
    // the engine answered
    List<SpanRecord> s = engine(215);
    s.add(
        server()
            .attr(LlmlatAttributes.UPSTREAM_CLIENT, "reactor-netty")
            .event(
                LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START,
                5,
                Map.of(LlmlatAttributes.UPSTREAM_SPAN_ID, id(8)))
            .event(
                LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED,
                100,
                Map.of(LlmlatAttributes.UPSTREAM_SPAN_ID, id(8)))
            .build());
    s.add(span(T, id(2), "POST", 200, 990).gateway().kind("Client").parent(id(1)).build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.component("upstream_pool_wait")).isZero();
    assertThat(a.component("gateway_in")).isEqualTo(200 * MS);
    assertThat(a.component("network_in")).isEqualTo(15 * MS);
  }

  @Test
  void aGatewayWhoseClientNobodyHookedSaysSo() {
    Attribution a = TraceAttribution.attribute(TtftAttributorTest.oneRequest()).get(0);
    assertThat(a.upstream().observed()).isFalse();
    assertThat(a.component("gateway_in")).isEqualTo(10 * MS);
    assertThat(a.notes())
        .contains("connection set-up unknown: the gateway's HTTP client is not instrumented");
  }
}
