package dev.llmlat.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.TtftComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * vLLM's disaggregated prefill/decode behind a proxy
 * (examples/online_serving/disaggregated_serving's toy proxy): the proxy sends each request to the
 * prefill instance with {@code kv_transfer_params} {@code do_remote_decode: true} (max_tokens 1),
 * then to the decode instance with the prefill's answer ({@code do_remote_prefill: true}, {@code
 * remote_engine_id}, blocks, host, port), which pulls the KV cache ({@code vllm_async_kv_transfer})
 * and streams the tokens. The two instances' hosts run clocks 50 ms ahead and 50 ms behind the
 * proxy's: alignment must come from the proxy's calls, the evidence. Each request's truth is built
 * into the fixture on the proxy's clock.
 */
class VllmDisaggregatedTest {
  private static final long MS = 1_000_000;
  private static final long BASE = 1_795_946_400_000_000_000L;
  private static final long PREFILL_SKEW = 50 * MS;
  private static final long DECODE_SKEW = -50 * MS;

  /** One request's truth, proxy clock. */
  record Truth(String traceId, long ttft, Map<String, Long> components) {}

  private record Fixture(List<SpanRecord> spans, List<Truth> truths) {}

  private static Fixture fixture(int n, boolean withPrefillSpans) {
    List<SpanRecord> spans = new ArrayList<>();
    List<Truth> truths = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String trace = String.format("%032x", 0xabc000L + i);
      String server = String.format("%016x", 0x1000L + i);
      String toPrefill = String.format("%016x", 0x2000L + i);
      String toDecode = String.format("%016x", 0x3000L + i);
      long s = BASE + i * 300 * MS;
      // prefill instance: arrival, handling, queue, prefill to its (only) token, response
      long cpStart = s + MS;
      long pArrival = cpStart + MS / 2;
      long pQueued = pArrival + 2 * MS;
      long pScheduled = pQueued + (i % 4) * 5 * MS;
      long pFirst = pScheduled + (20 + i) * MS;
      long pEnd = pFirst + MS / 2;
      long cpEnd = pEnd + MS / 2;
      // decode instance: arrival, handling, waiting for free blocks, the KV pull, queue, its first
      // step
      long cdStart = cpEnd + 3 * MS / 10;
      long dArrival = cdStart + MS / 2;
      long dQueued = dArrival + MS;
      long transferStart = dQueued + (i % 3) * 15 * MS;
      long transferEnd = transferStart + (3 + (i % 2) * 2) * MS;
      long dScheduled = transferEnd + 4 * MS;
      long dFirst = dScheduled + 8 * MS;
      long dEnd = dFirst + 100 * MS;
      long cdEnd = dEnd + 3 * MS / 10;
      long firstChunk = dFirst + 4 * MS / 10;
      long sEnd = cdEnd + MS / 5;
      spans.add(
          new SpanRecord(
              trace,
              server,
              "",
              "POST /v1/completions",
              "Server",
              "proxy",
              "gateway",
              "proxy-host",
              "",
              "proxy-0",
              s,
              sEnd,
              Map.of(),
              List.of(new SpanRecord.Event(firstChunk, "gen_ai.first_chunk", Map.of())),
              List.of()));
      spans.add(proxyCall(trace, toPrefill, server, cpStart, cpEnd, "prefill"));
      spans.add(proxyCall(trace, toDecode, server, cdStart, cdEnd, "decode"));
      if (withPrefillSpans) {
        spans.add(
            vllm(
                    trace,
                    String.format("%016x", 0x4000L + i),
                    toPrefill,
                    "prefill-host",
                    "prefill-0",
                    pArrival,
                    pEnd,
                    pQueued,
                    pScheduled,
                    pFirst,
                    "{\"do_remote_decode\": true, \"do_remote_prefill\": false}")
                .shifted(PREFILL_SKEW));
      }
      String id = "cmpl-" + i;
      spans.add(
          vllm(
                  trace,
                  String.format("%016x", 0x5000L + i),
                  toDecode,
                  "decode-host",
                  "decode-0",
                  dArrival,
                  dEnd,
                  dQueued,
                  dScheduled,
                  dFirst,
                  "{\"do_remote_decode\": false, \"do_remote_prefill\": true, \"remote_engine_id\": \"prefill-engine-0\","
                      + " \"remote_block_ids\": [1, 2, 3], \"remote_host\": \"10.0.0.1\", \"remote_port\": 5600}")
              .shifted(DECODE_SKEW));
      spans.add(
          phase(
                  trace,
                  String.format("%016x", 0x6000L + i),
                  toDecode,
                  "vllm_async_kv_transfer",
                  id,
                  transferStart,
                  transferEnd)
              .shifted(DECODE_SKEW));
      spans.add(
          phase(
                  trace,
                  String.format("%016x", 0x7000L + i),
                  toDecode,
                  "vllm_prefill",
                  id,
                  dScheduled,
                  dFirst)
              .shifted(DECODE_SKEW));
      Map<String, Long> c = new HashMap<>();
      c.put("gateway_in", cpStart - s);
      c.put("network_in", pArrival - cpStart);
      c.put("engine_in", (pQueued - pArrival) + (dQueued - dArrival));
      c.put("queue", (pScheduled - pQueued) + (dScheduled - transferEnd));
      // KV ready at the prefill's first token; the decode instance's own handling is engine_in
      c.put("decode_wait", (transferStart - pFirst) - (dQueued - dArrival));
      c.put("kv_transfer", transferEnd - transferStart);
      c.put(
          "prefill_gpu",
          (pFirst - pScheduled)
              + (dFirst - dScheduled)); // no GPU layer: step time counts as GPU time
      c.put("network_out", firstChunk - dFirst);
      truths.add(new Truth(trace, firstChunk - s, c));
    }
    return new Fixture(spans, truths);
  }

  private static SpanRecord proxyCall(
      String trace, String id, String parent, long start, long end, String to) {
    return new SpanRecord(
        trace,
        id,
        parent,
        "POST",
        "Client",
        "proxy",
        "gateway",
        "proxy-host",
        "",
        "proxy-0",
        start,
        end,
        Map.of("server.address", to + "-host", "server.port", "8000"),
        List.of(),
        List.of());
  }

  /**
   * vLLM's llm_request (do_tracing): arrival to the final output, latencies in seconds, the
   * request's kv_transfer_params.
   */
  private static SpanRecord vllm(
      String trace,
      String id,
      String parent,
      String host,
      String instance,
      long arrival,
      long end,
      long queued,
      long scheduled,
      long first,
      String kvParams) {
    Map<String, String> a = new HashMap<>();
    a.put("gen_ai.request.id", "cmpl-" + Long.parseLong(trace.substring(26), 16) % 0x1000);
    a.put("gen_ai.latency.time_to_first_token", Double.toString((first - arrival) / 1e9));
    a.put("gen_ai.latency.e2e", Double.toString((end - arrival) / 1e9));
    a.put("gen_ai.latency.time_in_queue", Double.toString((scheduled - queued) / 1e9));
    a.put("gen_ai.latency.time_in_model_prefill", Double.toString((first - scheduled) / 1e9));
    a.put("gen_ai.usage.input_tokens", "512");
    if (kvParams != null) {
      a.put("vllm.kv_transfer_params", kvParams);
    }
    return new SpanRecord(
        trace,
        id,
        parent,
        "llm_request",
        "Server",
        "vllm",
        "",
        host,
        "vllm.tracing.otel",
        instance,
        arrival,
        end,
        a,
        List.of(),
        List.of());
  }

  /**
   * The same span without kv_transfer_params (vLLM's own span never carries them), with a request
   * id and token counts.
   */
  private static SpanRecord vllm(
      String trace,
      String id,
      String parent,
      String host,
      String instance,
      long arrival,
      long end,
      long queued,
      long scheduled,
      long first,
      String requestId,
      int maxTokens,
      int completionTokens) {
    SpanRecord v =
        vllm(trace, id, parent, host, instance, arrival, end, queued, scheduled, first, null);
    Map<String, String> a = new HashMap<>(v.attributes());
    a.put("gen_ai.request.id", requestId);
    a.put("gen_ai.request.max_tokens", Integer.toString(maxTokens));
    a.put("gen_ai.usage.completion_tokens", Integer.toString(completionTokens));
    return new SpanRecord(
        v.traceId(),
        v.spanId(),
        v.parentSpanId(),
        v.name(),
        v.kind(),
        v.service(),
        v.layer(),
        v.host(),
        v.scope(),
        v.instance(),
        v.startNs(),
        v.endNs(),
        a,
        v.events(),
        v.links());
  }

  /**
   * llm-d's routing sidecar on the decode pod (engine-traces/disaggregated.md, section 3) and
   * vLLM's P2pNccl toy proxy (section 5). The sidecar clones the incoming request for the prefill
   * instance (max_tokens 1) and then for its local decode instance, keeping the incoming
   * traceparent and adding its own request id: both vLLM spans are children of the gateway's CLIENT
   * span, the sidecar's spans their siblings. The decode instance pulls the KV cache (NIXL) inside
   * its queue time; nothing times the pull. P2pNccl's proxy sends no traceparent at all, only one
   * {@code ___prefill_addr_..___decode_addr_..} request id to both: two traces, joined by that id;
   * the NCCL receive waits inside the decode instance's first step.
   */
  private static Fixture proxied(int n, boolean llmd, long prefillSkew, long decodeSkew) {
    List<SpanRecord> spans = new ArrayList<>();
    List<Truth> truths = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String trace = String.format("%032x", 0x11d000L + i);
      String prefillTrace = llmd ? trace : String.format("%032x", 0xa1000L + i);
      String decodeTrace = llmd ? trace : String.format("%032x", 0xa2000L + i);
      String server = String.format("%016x", 0x1000L + i);
      String call = String.format("%016x", 0x2000L + i);
      long s = BASE + i * 300 * MS;
      long callStart = s + MS;
      // sidecar (or proxy) on the way in: 0.5 ms; the prefill instance's handling, queue and
      // prefill
      long pArrival = callStart + MS / 2 + MS / 2;
      long pQueued = pArrival + 2 * MS;
      long pScheduled = pQueued + (i % 4) * 5 * MS;
      long pFirst = pScheduled + (20 + i) * MS + MS / 2; // no ties between components
      long pEnd = pFirst + MS / 2;
      // the sidecar takes the prefill's answer and calls the decode instance
      long dArrival = pEnd + MS;
      long dQueued = dArrival + MS;
      long pull = (3 + (i % 2) * 2) * MS;
      long dScheduled =
          dQueued + (i % 3) * 15 * MS + (llmd ? pull : 0); // NIXL's pull waits in the queue
      long dFirst =
          dScheduled + 8 * MS + (llmd ? 0 : pull); // P2pNccl's receive inside the first step
      long dEnd = dFirst + 100 * MS;
      long firstChunk = dFirst + 4 * MS / 10;
      long sEnd = dEnd + MS;
      String requestId =
          llmd
              ? "chatcmpl-" + String.format("6f1c2e4a-3b5d-11f0-9a7e-%012x", 0x0242ac120000L + i)
              : String.format(
                  "cmpl-___prefill_addr_10.0.0.1:21001___decode_addr_10.0.0.2:22001_%032x-0",
                  0x9f1c0b7e2dL + i);
      String parent = llmd ? call : "";
      if (llmd) {
        spans.add(Spans.gatewayServer(trace, server, s, sEnd, firstChunk));
        spans.add(
            Spans.gatewayCall(trace, call, server, callStart, dFirst + 3 * MS / 10, "decode-pod"));
        // the sidecar's own spans: siblings of the vLLM spans, on the decode pod's clock
        String s0 = String.format("%016x", 0x8000L + i);
        String s1 = String.format("%016x", 0x8100L + i);
        String s2 = String.format("%016x", 0x8200L + i);
        Map<String, String> id =
            Map.of("llm_d.pd_proxy.request_id", requestId.substring("chatcmpl-".length()));
        spans.add(
            sidecar(
                    trace,
                    s0,
                    call,
                    "llm_d.pd_proxy.POST /v1/chat/completions",
                    "Server",
                    callStart + MS / 4,
                    sEnd - MS / 2,
                    Map.of())
                .shifted(decodeSkew));
        spans.add(
            sidecar(
                    trace,
                    s1,
                    s0,
                    "llm_d.pd_proxy.request",
                    "Server",
                    callStart + MS / 3,
                    sEnd - MS / 2,
                    Map.of(
                        "llm_d.pd_proxy.connector",
                        "nixlv2",
                        "llm_d.pd_proxy.disaggregation_used",
                        "true"))
                .shifted(decodeSkew));
        spans.add(
            sidecar(
                    trace,
                    s2,
                    s1,
                    "llm_d.pd_proxy.prefill",
                    "Internal",
                    callStart + MS / 2,
                    pEnd + MS / 2,
                    id)
                .shifted(decodeSkew));
        spans.add(
            sidecar(
                    trace,
                    String.format("%016x", 0x8300L + i),
                    s2,
                    "llm_d.pd_proxy.decode",
                    "Internal",
                    pEnd + MS / 2 + MS / 4,
                    sEnd - MS / 2,
                    id)
                .shifted(decodeSkew));
      }
      spans.add(
          vllm(
                  prefillTrace,
                  String.format("%016x", 0x4000L + i),
                  parent,
                  "prefill-host",
                  "prefill-0",
                  pArrival,
                  pEnd,
                  pQueued,
                  pScheduled,
                  pFirst,
                  requestId,
                  1,
                  1)
              .shifted(prefillSkew));
      spans.add(
          vllm(
                  decodeTrace,
                  String.format("%016x", 0x5000L + i),
                  parent,
                  "decode-host",
                  "decode-0",
                  dArrival,
                  dEnd,
                  dQueued,
                  dScheduled,
                  dFirst,
                  requestId,
                  256,
                  101)
              .shifted(decodeSkew));
      Map<String, Long> c = new HashMap<>();
      long t0 = llmd ? s : pArrival;
      if (llmd) {
        c.put("gateway_in", callStart - s);
        c.put("network_in", pArrival - callStart);
        c.put("network_out", firstChunk - dFirst);
      }
      c.put("engine_in", (pQueued - pArrival) + (dQueued - dArrival));
      c.put(
          "queue",
          (pScheduled - pQueued)
              + (dScheduled - dQueued)); // NIXL's pull is inside the decode queue: not split
      c.put(
          "decode_wait",
          dArrival - pFirst); // the prefill's answer back to the sidecar, the decode call's way in
      c.put("prefill_gpu", (pFirst - pScheduled) + (dFirst - dScheduled));
      // without a client-side span the joined request keeps the earlier half's trace
      truths.add(new Truth(llmd ? trace : prefillTrace, (llmd ? firstChunk : dFirst) - t0, c));
    }
    return new Fixture(spans, truths);
  }

  private static SpanRecord sidecar(
      String trace,
      String id,
      String parent,
      String name,
      String kind,
      long start,
      long end,
      Map<String, String> attributes) {
    return new SpanRecord(
        trace,
        id,
        parent,
        name,
        kind,
        "llm-d-inference-scheduler",
        "",
        "decode-host",
        "llm-d-inference-scheduler",
        "sidecar-0",
        start,
        end,
        attributes,
        List.of(),
        List.of());
  }

  private static void assertProxiedMatch(
      Fixture f, List<Attribution> result, long tolerance, String evidence) {
    assertThat(result).hasSize(f.truths().size());
    Map<String, Attribution> byTrace = new HashMap<>();
    result.forEach(a -> byTrace.put(a.traceId(), a));
    for (Truth t : f.truths()) {
      Attribution a = byTrace.get(t.traceId());
      assertThat(a).as("attribution of %s among %s", t.traceId(), byTrace.keySet()).isNotNull();
      assertThat(a.disaggregated()).isTrue();
      assertThat(a.notes())
          .anyMatch(
              n ->
                  n.startsWith("disaggregated (" + evidence)
                      && n.contains("prefill on prefill-0, decode on decode-0"));
      assertThat(a.notes()).anyMatch(n -> n.contains("neither instance times the KV transfer"));
      assertThat(Math.abs(a.ttftNs() - t.ttft()))
          .as("TTFT of %s", t.traceId())
          .isLessThanOrEqualTo(tolerance);
      for (String c : TtftComponent.ids()) {
        long truth = t.components().getOrDefault(c, 0L);
        assertThat(Math.abs(a.component(c) - truth))
            .as("%s of %s: %s", c, t.traceId(), a.components())
            .isLessThanOrEqualTo(tolerance);
      }
      String largest =
          a.components().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .orElseThrow()
              .getKey();
      String truthLargest =
          t.components().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .orElseThrow()
              .getKey();
      assertThat(largest)
          .as("largest of %s: %s, truth %s", t.traceId(), a.components(), t.components())
          .isEqualTo(truthLargest);
    }
  }

  @Test
  void llmdSidecarRequestsAreJoinedByTraceAndTheirOneTokenPrefill() {
    Fixture f = proxied(12, true, PREFILL_SKEW, DECODE_SKEW);
    List<Attribution> result = TraceAttribution.attribute(f.spans());
    assertProxiedMatch(f, result, MS, "the prefill call's one token");
    assertThat(result.get(0).corrections())
        .filteredOn(ClockCorrection::applied)
        .extracting(ClockCorrection::host)
        .contains("prefill-host", "decode-host");
  }

  @Test
  void p2pNcclHalvesInTwoTracesAreJoinedByTheirRequestId() {
    Fixture f = proxied(9, false, 0, 0);
    List<Attribution> result = TraceAttribution.attribute(f.spans());
    assertProxiedMatch(f, result, 10_000, "the prefill call's one token");
    assertThat(result)
        .allSatisfy(
            a -> assertThat(a.notes()).anyMatch(n -> n.contains("joined by gen_ai.request.id")));
  }

  private static SpanRecord phase(
      String trace, String id, String parent, String name, String requestId, long start, long end) {
    return new SpanRecord(
        trace,
        id,
        parent,
        name,
        "Internal",
        "vllm",
        "",
        "decode-host",
        "vllm.tracing.otel",
        "decode-0",
        start,
        end,
        Map.of("request_id", requestId),
        List.of(),
        List.of());
  }

  @Test
  void bothInstancesOfEachRequestAreJoinedAlignedAndSplit() {
    Fixture f = fixture(12, true);
    List<Attribution> result = TraceAttribution.attribute(f.spans());
    assertThat(result).hasSize(12); // one per request, not one per instance
    Map<String, Attribution> byTrace = new HashMap<>();
    result.forEach(a -> byTrace.put(a.traceId(), a));
    for (Truth t : f.truths()) {
      Attribution a = byTrace.get(t.traceId());
      assertThat(a.engineAdapter()).isEqualTo("vLLM");
      assertThat(a.notes())
          .contains("disaggregated (kv_transfer_params): prefill on prefill-0, decode on decode-0");
      assertThat(a.corrections())
          .filteredOn(ClockCorrection::applied)
          .extracting(ClockCorrection::host)
          .containsExactlyInAnyOrder("prefill-host", "decode-host");
      // the proxy's calls are symmetric to 0.1 ms: TTFT and every component within 0.5 ms of the
      // truth
      assertThat(Math.abs(a.ttftNs() - t.ttft()))
          .as("TTFT of %s", t.traceId())
          .isLessThanOrEqualTo(MS / 2);
      for (String c : TtftComponent.ids()) {
        long truth = t.components().getOrDefault(c, 0L);
        assertThat(Math.abs(a.component(c) - truth))
            .as("%s of %s: %s", c, t.traceId(), a.components())
            .isLessThanOrEqualTo(MS / 2);
      }
      assertThat(a.instancesOf("queue"))
          .extracting(Attribution.InstancePart::instance)
          .contains("decode-0")
          .isSubsetOf("prefill-0", "decode-0");
      assertThat(a.instancesOf("decode_wait"))
          .extracting(Attribution.InstancePart::instance)
          .containsExactly("decode-0");
      assertThat(a.instancesOf("engine_in"))
          .extracting(Attribution.InstancePart::role)
          .containsExactly("prefill", "decode");
      assertThat(a.instancesOf("kv_transfer"))
          .extracting(Attribution.InstancePart::instance)
          .containsExactly("prefill-0 -> decode-0");
      assertThat(a.criticalPath())
          .filteredOn(s -> s.component().equals("kv_transfer"))
          .extracting(Attribution.Segment::span)
          .containsOnly("vllm_async_kv_transfer (the engine's transfer time)");
      String largest =
          a.components().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .orElseThrow()
              .getKey();
      String truthLargest =
          t.components().entrySet().stream()
              .max(Map.Entry.comparingByValue())
              .orElseThrow()
              .getKey();
      assertThat(largest).isEqualTo(truthLargest);
    }
    for (ClockCorrection c : result.get(0).corrections()) {
      if (c.applied()) {
        long expected = c.host().equals("prefill-host") ? -PREFILL_SKEW : -DECODE_SKEW;
        assertThat(Math.abs(c.offsetAt(result.get(0).arrivalNs()) - expected))
            .as(c.toString())
            .isLessThanOrEqualTo(MS / 5);
      }
    }
  }

  /**
   * The prefill instance's spans missing: the decode side is attributed alone, and what cannot be
   * split is said.
   */
  @Test
  void withoutThePrefillInstanceWhatCannotBeSplitIsSaid() {
    Fixture f = fixture(12, false);
    List<Attribution> result = TraceAttribution.attribute(f.spans());
    assertThat(result).hasSize(12);
    for (Attribution a : result) {
      assertThat(a.notes())
          .anyMatch(
              n ->
                  n.contains("the prefill instance's spans are missing")
                      && n.contains("cannot be split"));
      assertThat(a.component("decode_wait")).isZero();
      assertThat(a.disaggregated()).isFalse();
    }
  }
}
