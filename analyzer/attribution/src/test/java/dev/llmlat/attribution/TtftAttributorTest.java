package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static dev.llmlat.attribution.Spans.id;
import static dev.llmlat.attribution.Spans.span;
import static dev.llmlat.attribution.Spans.trace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import dev.llmlat.semconv.TtftComponent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TtftAttributorTest {
  static final String T = trace(1);
  static final String OTHER = trace(2);

  /**
   * Gateway, engine with one mixed prefill step (half its tokens are another request's), GPU busy
   * 200 of 230 ms.
   */
  static List<SpanRecord> oneRequest() {
    List<SpanRecord> s = new ArrayList<>();
    s.add(
        span(T, id(1), "POST /v1/chat/completions", 0, 1000)
            .gateway()
            .kind("Server")
            .event("gen_ai.first_chunk", 300)
            .build());
    s.add(span(T, id(2), "POST", 10, 990).gateway().kind("Client").parent(id(1)).build());
    s.add(
        span(T, id(3), "llm_request", 15, 980)
            .kind("Server")
            .parent(id(2))
            .event("llmlat.first_token", 290)
            .attr("gen_ai.request.model", "m")
            .attr("gen_ai.usage.input_tokens", 100)
            .build());
    s.add(span(T, id(4), "queue", 15, 50).parent(id(3)).build());
    s.add(
        span(T, id(5), "prefill", 50, 280)
            .parent(id(3))
            .attr("llmlat.step.span_id", id(9))
            .attr("llmlat.prefill.tokens", 100)
            .build());
    s.add(
        span(T, id(9), "step", 50, 280)
            .parent(id(3))
            .attr("llmlat.step.prefill_tokens", 100)
            .attr("llmlat.step.decode_tokens", 100)
            .attr("llmlat.step.batch_size", 2)
            .attr("llmlat.trace_ids", "[\"" + T + "\",\"" + OTHER + "\"]")
            .link(T)
            .link(OTHER)
            .build());
    s.add(
        span(T, id(10), "step", 52, 279)
            .gpu()
            .parent(id(9))
            .attr("llmlat.step.span_id", id(9))
            .attr("llmlat.gpu.busy_ns", 200 * MS)
            .build());
    s.add(
        span(T, id(6), "decode", 290, 980)
            .parent(id(3))
            .attr("llmlat.decode.token_deltas_ns", "[10000000,10000000,60000000,10000000]")
            .build());
    return s;
  }

  @Test
  void splitsTtftIntoComponentsThatSumExactly() {
    Attribution a = TraceAttribution.attribute(oneRequest()).get(0);
    assertThat(a.ttftNs()).isEqualTo(300 * MS);
    assertThat(a.startLayer()).isEqualTo("gateway");
    assertThat(a.components())
        .containsExactly(
            entry("client_to_gateway", 0L),
            entry("gateway_in", 10 * MS),
            entry("upstream_pool_wait", 0L),
            entry("upstream_connect", 0L),
            entry("upstream_tls", 0L),
            entry("network_in", 5 * MS),
            entry("engine_in", 0L),
            entry("queue", 35 * MS),
            entry("decode_wait", 0L),
            entry("kv_transfer", 0L),
            entry("prefill_cpu", 30 * MS),
            entry("prefill_gpu", 100 * MS),
            entry("rank_wait", 0L),
            entry("batch_interference", 100 * MS),
            entry("first_sample", 10 * MS),
            entry("network_out", 10 * MS),
            entry("gateway_out", 0L),
            entry("gateway_to_client", 0L),
            entry("unattributed", 0L));
    assertThat(a.criticalPath())
        .extracting(Attribution.Segment::component)
        .containsExactly(
            "gateway_in", "network_in", "queue", "step", "first_sample", "network_out");
    assertThat(a.model()).isEqualTo("m");
    assertThat(a.promptTokens()).isEqualTo(100);
  }

  @Test
  void namesTheLongGapAndLeavesTheOthers() {
    Attribution a = TraceAttribution.attribute(oneRequest()).get(0);
    assertThat(a.itl())
        .extracting(Attribution.Gap::gapNs)
        .containsExactly(10 * MS, 10 * MS, 60 * MS, 10 * MS);
    assertThat(a.itl().get(2).cause()).isEqualTo("slow step (60.0 ms)");
    assertThat(a.itl().get(0).cause()).isEmpty();
  }

  @Test
  void aStallIsBlamedOnTheOtherRequestsPrefill() {
    List<SpanRecord> s = oneRequest();
    // another request's 2048-token prefill on the same engine during the long gap (310..370 ms)
    s.add(
        span(OTHER, id(20), "step", 312, 368)
            .attr("llmlat.step.prefill_tokens", 2048)
            .attr("llmlat.step.batch_size", 1)
            .attr("llmlat.trace_ids", "[\"" + OTHER + "\"]")
            .build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.itl().get(2).cause())
        .isEqualTo("stalled by prefill of request " + OTHER + " (2048 tokens)");
  }

  @Test
  void aPreemptionIsNamed() {
    List<SpanRecord> s = oneRequest();
    SpanRecord e = s.get(2);
    List<SpanRecord.Event> events = new ArrayList<>(e.events());
    events.add(new SpanRecord.Event(Spans.BASE + 330 * MS, "llmlat.preempted", java.util.Map.of()));
    s.set(
        2,
        new SpanRecord(
            e.traceId(),
            e.spanId(),
            e.parentSpanId(),
            e.name(),
            e.kind(),
            e.service(),
            e.layer(),
            e.host(),
            e.startNs(),
            e.endNs(),
            e.attributes(),
            events,
            e.links()));
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.itl().get(2).cause()).isEqualTo("preempted");
    assertThat(a.preemptions()).isEqualTo(1);
  }

  @Test
  void withoutAGatewayTtftRunsFromEngineArrivalToFirstToken() {
    List<SpanRecord> s = oneRequest().subList(2, 8);
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.startLayer()).isEqualTo("engine");
    assertThat(a.ttftNs()).isEqualTo(275 * MS);
    assertThat(a.component("queue")).isEqualTo(35 * MS);
    assertThat(a.component("first_sample")).isEqualTo(10 * MS);
    assertThat(a.component("gateway_in") + a.component("network_in") + a.component("network_out"))
        .isZero();
  }

  @Test
  void vllmSpansAreAttributedToTheDepthTheirAttributesAllow() {
    // vLLM V1: time_in_queue and time_in_model_prefill chain back from the first token; what lies
    // between arrival and the scheduler's queue is the engine's own handling
    List<SpanRecord> s =
        List.of(
            span(T, id(3), "llm_request", 0, 900)
                .kind("Server")
                .selfTraced("vllm.llm_engine")
                .attr("gen_ai.latency.time_in_queue", 0.125)
                .attr("gen_ai.latency.time_in_model_prefill", 0.25)
                .attr("gen_ai.latency.time_to_first_token", 0.4)
                .build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.engineAdapter()).isEqualTo("vLLM");
    assertThat(a.ttftNs()).isEqualTo(400 * MS);
    assertThat(a.component("engine_in")).isEqualTo(25 * MS);
    assertThat(a.component("queue")).isEqualTo(125 * MS);
    assertThat(a.component("prefill_gpu")).isEqualTo(250 * MS);
    assertThat(a.notes())
        .contains("no GPU layer for this request: engine step time is counted as GPU time");
  }

  @Test
  void anEngineWithoutPrefillFigureHasItsQueuePlacedAtArrival() {
    // TensorRT-LLM: time_in_queue runs from arrival to first scheduled, no prefill figure
    List<SpanRecord> s =
        List.of(
            span(T, id(3), "llm_request", 0, 900)
                .kind("Server")
                .selfTraced("trt.llm")
                .attr("gen_ai.latency.time_in_queue", 0.125)
                .attr("gen_ai.latency.time_to_first_token", 0.4)
                .attr("gen_ai.latency.kv_cache_transfer_time", 0.0)
                .build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.engineAdapter()).isEqualTo("TensorRT-LLM");
    assertThat(a.component("queue")).isEqualTo(125 * MS);
    assertThat(a.component("prefill_gpu")).isEqualTo(275 * MS);
  }

  @Test
  void gapsNobodyExplainsAreUnattributedNotHidden() {
    List<SpanRecord> s = new ArrayList<>(oneRequest());
    s.remove(1); // no gateway client span: gateway_in and network_in unknown
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.component("unattributed")).isEqualTo(15 * MS);
    assertThat(a.components().values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(a.ttftNs());
  }

  @Test
  void anEngineNoAdapterKnowsStillGetsGatewayNetworkAndItsTotal() {
    List<SpanRecord> s = new ArrayList<>();
    s.add(
        span(T, id(1), "POST /v1/chat/completions", 0, 1000)
            .gateway()
            .kind("Server")
            .event("gen_ai.first_chunk", 300)
            .build());
    s.add(span(T, id(2), "POST", 10, 990).gateway().kind("Client").parent(id(1)).build());
    s.add(
        span(T, id(3), "POST /generate", 15, 980)
            .kind("Server")
            .parent(id(2))
            .selfTraced("io.custom.engine")
            .build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.engineAdapter()).isEqualTo("unknown engine");
    assertThat(a.ttftNs()).isEqualTo(300 * MS);
    assertThat(a.component("gateway_in")).isEqualTo(10 * MS);
    assertThat(a.component("network_in")).isEqualTo(5 * MS);
    assertThat(a.component("unattributed")).isEqualTo(285 * MS);
    assertThat(a.criticalPath())
        .extracting(Attribution.Segment::span)
        .contains("engine: POST /generate");
    assertThat(a.notes()).anyMatch(n -> n.contains("follows no known convention"));
  }

  @Test
  void withoutAFirstTokenTheLastPrefillStepOnTheGpuEndsTtft() {
    // an engine with arrival and end only; the GPU export's NVTX ranges name the prefill and decode
    // steps
    List<SpanRecord> s = new ArrayList<>();
    s.add(span(T, id(3), "llm_request", 0, 3000).kind("Server").build());
    s.add(
        span(trace(9), id(20), "step", 40, 90)
            .gpu()
            .attr("llmlat.step.kind", "prefill")
            .attr("llmlat.trace_ids", "[\"" + T + "\"]")
            .build());
    s.add(
        span(trace(9), id(21), "step", 95, 120)
            .gpu()
            .attr("llmlat.step.kind", "prefill")
            .attr("llmlat.trace_ids", "[\"" + T + "\"]")
            .build());
    s.add(
        span(trace(9), id(22), "step", 130, 140)
            .gpu()
            .attr("llmlat.step.kind", "decode")
            .attr("llmlat.trace_ids", "[\"" + T + "\",\"" + OTHER + "\"]")
            .build());
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.ttftNs()).isEqualTo(120 * MS);
    assertThat(a.component("queue")).isEqualTo(40 * MS);
    assertThat(a.component("prefill_gpu") + a.component("prefill_cpu")).isEqualTo(80 * MS);
    assertThat(a.notes()).anyMatch(n -> n.contains("last prefill step on the GPU"));
  }

  @Test
  void theUpstreamFirstChunkSplitsNetworkOutFromGatewayOut() {
    List<SpanRecord> s = new ArrayList<>(oneRequest());
    SpanRecord server = s.get(0);
    List<SpanRecord.Event> events = new ArrayList<>(server.events());
    // a retried upstream call's event names another CLIENT span: not this request's
    events.add(
        new SpanRecord.Event(
            Spans.BASE + 296 * MS,
            "llmlat.upstream.first_chunk",
            java.util.Map.of("llmlat.upstream.span_id", id(77))));
    events.add(
        new SpanRecord.Event(
            Spans.BASE + 294 * MS,
            "llmlat.upstream.first_chunk",
            java.util.Map.of("llmlat.upstream.span_id", id(2))));
    s.set(
        0,
        new SpanRecord(
            server.traceId(),
            server.spanId(),
            server.parentSpanId(),
            server.name(),
            server.kind(),
            server.service(),
            server.layer(),
            server.host(),
            server.startNs(),
            server.endNs(),
            server.attributes(),
            events,
            server.links()));
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.component("network_out")).isEqualTo(4 * MS);
    assertThat(a.component("gateway_out")).isEqualTo(6 * MS);
    assertThat(a.ttftNs()).isEqualTo(300 * MS);
  }

  @Test
  void theGatewayBlockedOnItsClientIsItsOwnStretchOfGatewayOut() {
    // engine first token 290 ms, the gateway's upstream first chunk 294, its first chunk to the
    // client 300; the gateway
    // could not write from 296 to 299 ms (and 250-260, before the first token: not TTFT's way out)
    List<SpanRecord> s = new ArrayList<>(oneRequest());
    SpanRecord server = s.get(0);
    List<SpanRecord.Event> events = new ArrayList<>(server.events());
    events.add(
        new SpanRecord.Event(
            Spans.BASE + 294 * MS,
            "llmlat.upstream.first_chunk",
            java.util.Map.of("llmlat.upstream.span_id", id(2))));
    events.add(
        new SpanRecord.Event(
            Spans.BASE + 250 * MS,
            "llmlat.gateway.backpressure",
            java.util.Map.of("llmlat.gateway.backpressure.duration_ns", Long.toString(10 * MS))));
    events.add(
        new SpanRecord.Event(
            Spans.BASE + 296 * MS,
            "llmlat.gateway.backpressure",
            java.util.Map.of(
                "llmlat.gateway.backpressure.duration_ns",
                Long.toString(3 * MS),
                "llmlat.gateway.backpressure.cause",
                "http2_stream_window")));
    s.set(
        0,
        new SpanRecord(
            server.traceId(),
            server.spanId(),
            server.parentSpanId(),
            server.name(),
            server.kind(),
            server.service(),
            server.layer(),
            server.host(),
            server.startNs(),
            server.endNs(),
            server.attributes(),
            events,
            server.links()));
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.component("network_out")).isEqualTo(4 * MS);
    assertThat(a.component("gateway_out")).isEqualTo(6 * MS);
    assertThat(a.ttftNs()).isEqualTo(300 * MS);
    assertThat(a.criticalPath())
        .filteredOn(p -> p.component().equals("gateway_out"))
        .extracting(p -> p.span(), p -> (p.endNs() - p.startNs()) / MS)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(server.name(), 2L),
            org.assertj.core.groups.Tuple.tuple(
                "the gateway could not write to its client (the request's HTTP/2 stream window"
                    + " was full: the client read slowly)",
                3L),
            org.assertj.core.groups.Tuple.tuple(server.name(), 1L));
  }

  /** {@link #oneRequest()} sent by a load generator: its CLIENT span is the gateway's parent. */
  static List<SpanRecord> fromClient(String clientHost, double skewMs) {
    List<SpanRecord> s = new ArrayList<>(oneRequest());
    SpanRecord gw = s.get(0);
    s.set(
        0,
        new SpanRecord(
            gw.traceId(),
            gw.spanId(),
            id(30),
            gw.name(),
            gw.kind(),
            gw.service(),
            gw.layer(),
            gw.host(),
            gw.scope(),
            gw.instance(),
            gw.startNs(),
            gw.endNs(),
            gw.attributes(),
            gw.events(),
            gw.links()));
    s.add(
        span(T, id(30), "POST", -4 + skewMs, 1002 + skewMs)
            .client(clientHost)
            .event("llmlat.client.response_headers", 296 + skewMs)
            .event("llmlat.client.first_chunk", 303 + skewMs)
            .build());
    return s;
  }

  @Test
  void aClientLayerStartsAndEndsTtftAndAddsTheWayThereAndBack() {
    Attribution a = TraceAttribution.attribute(fromClient("gw-host", 0)).get(0);
    assertThat(a.startLayer()).isEqualTo("client");
    assertThat(a.ttftNs()).isEqualTo(307 * MS);
    assertThat(a.serverTtftNs()).isEqualTo(300 * MS);
    assertThat(a.component("client_to_gateway")).isEqualTo(4 * MS);
    assertThat(a.component("gateway_to_client")).isEqualTo(3 * MS);
    // the server's own components are those of the same request without a client
    Attribution server = TraceAttribution.attribute(oneRequest()).get(0);
    for (String c : TtftComponent.ids()) {
      if (!c.equals("client_to_gateway") && !c.equals("gateway_to_client")) {
        assertThat(a.component(c)).as(c).isEqualTo(server.component(c));
      }
    }
    assertThat(a.criticalPath().get(0).component()).isEqualTo("client_to_gateway");
    assertThat(a.criticalPath().get(a.criticalPath().size() - 1).component())
        .isEqualTo("gateway_to_client");
  }

  @Test
  void aClientOnAnotherHostWithASkewedClockKeepsItsOwnTtftAndIsAligned() {
    // the client's clock runs 50 ms ahead: its span, read as is, would not cover the gateway's
    Attribution a = TraceAttribution.attribute(fromClient("client-host", 50)).get(0);
    assertThat(a.startLayer()).isEqualTo("client");
    // both ends are read on the client's clock: its TTFT does not depend on the alignment
    assertThat(a.ttftNs()).isEqualTo(307 * MS);
    assertThat(a.serverTtftNs()).isEqualTo(300 * MS);
    assertThat(a.component("client_to_gateway") + a.component("gateway_to_client"))
        .isEqualTo(7 * MS);
    assertThat(a.component("client_to_gateway")).isBetween(0L, 7 * MS);
    assertThat(a.corrections()).anyMatch(ClockCorrection::applied);
  }

  @Test
  void aClientWithoutAFirstChunkLeavesTheServersTtft() {
    List<SpanRecord> s = fromClient("gw-host", 0);
    SpanRecord c = s.get(s.size() - 1);
    s.set(
        s.size() - 1,
        new SpanRecord(
            c.traceId(),
            c.spanId(),
            c.parentSpanId(),
            c.name(),
            c.kind(),
            c.service(),
            c.layer(),
            c.host(),
            c.scope(),
            c.instance(),
            c.startNs(),
            c.endNs(),
            c.attributes(),
            List.of(),
            c.links()));
    Attribution a = TraceAttribution.attribute(s).get(0);
    assertThat(a.startLayer()).isEqualTo("gateway");
    assertThat(a.ttftNs()).isEqualTo(300 * MS);
    assertThat(a.component("client_to_gateway")).isZero();
    assertThat(a.notes()).anyMatch(n -> n.contains("recorded no first content chunk"));
  }
}
