package dev.llmlat.attribution;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.TtftComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * TensorRT-LLM disaggregated serving (engine-traces/disaggregated.md, section 2; tensorrt-llm.md):
 * a context worker and a generation worker each write their own {@code llm_request} (scope {@code
 * trt.llm}). The context-only half finishes {@code not_finished} with one token; the generation
 * worker is scheduled, then receives the KV cache (events {@code kv_cache_transfer_start}/{@code
 * _end} with {@code kv_cache_size}) and runs its first step. The halves share a trace only where
 * the caller passes trace headers to both, as Dynamo's frontend does: here the gateway's CLIENT
 * span is the parent of both. trtllm-serve's own proxy sends none and no span carries {@code
 * ctx_request_id}: its halves cannot be joined.
 *
 * <p>One call answered by two workers bounds their clocks but times neither (no per-worker round
 * trip), so the workers' clocks agree with the gateway's here. Truth on the gateway's clock.
 */
class TensorRtLlmDisaggregatedTest {
  private static final long MS = 1_000_000;
  private static final long US = 1_000;
  private static final long BASE = 1_795_946_400_000_000_000L;

  record Truth(String traceId, long ttft, Map<String, Long> components) {}

  @Test
  void contextAndGenerationWorkersAreOneRequestWithTheKvTransferOnTheGenerationSide() {
    List<SpanRecord> spans = new ArrayList<>();
    List<Truth> truths = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      String trace = String.format("%032x", 0x7e1000L + i);
      String server = String.format("%016x", 0x1000L + i);
      String call = String.format("%016x", 0x2000L + i);
      long s = BASE + i * 500 * MS;
      long callStart = s + MS;
      long pA =
          callStart + 2 * MS; // the frontend's routing, then the context worker's arrival (after
      // tokenization)
      long pS = pA + (i % 4) * 7 * MS;
      long pF = pS + (40 + 5 * i) * MS + 300 * US;
      long pE = pF + 300 * US;
      long dA = pE + MS;
      long dS = dA + (i % 3) * 9 * MS;
      long kvStart = dS + 200 * US;
      long kvEnd = kvStart + (6 + (i % 2) * 4) * MS;
      long dF = kvEnd + 7 * MS;
      long dLast = dF + 200 * MS;
      long dE = dLast + 500 * US;
      long firstChunk = dF + MS;
      spans.add(Spans.gatewayServer(trace, server, s, dE + 2 * MS, firstChunk));
      spans.add(
          Spans.gatewayCall(trace, call, server, callStart, dF + 800 * US, "dynamo-frontend"));
      spans.add(
          worker(
              trace,
              String.format("%016x", 0x3000L + i),
              call,
              "ctx-host",
              pA,
              pE,
              pS,
              pF,
              pF,
              "[\"not_finished\"]",
              1,
              0,
              List.of()));
      spans.add(
          worker(
              trace,
              String.format("%016x", 0x4000L + i),
              call,
              "gen-host",
              dA,
              dE,
              dS,
              dF,
              dLast,
              "[\"stop\"]",
              201,
              kvEnd - kvStart,
              List.of(
                  new SpanRecord.Event(kvStart, "kv_cache_transfer_start", Map.of()),
                  new SpanRecord.Event(
                      kvEnd, "kv_cache_transfer_end", Map.of("kv_cache_size", "67108864")))));
      Map<String, Long> c = new HashMap<>();
      c.put("gateway_in", callStart - s);
      c.put("network_in", pA - callStart);
      c.put("queue", pS - pA);
      c.put(
          "prefill_gpu",
          (pF - pS) + (dF - kvEnd)); // no GPU layer: the workers' steps count as GPU time
      c.put(
          "decode_wait",
          kvStart - pF); // the context worker's answer, the generation worker's queue
      c.put("kv_transfer", kvEnd - kvStart);
      c.put("network_out", firstChunk - dF);
      truths.add(new Truth(trace, firstChunk - s, c));
    }
    List<Attribution> result = TraceAttribution.attribute(spans);
    assertThat(result).hasSize(truths.size());
    Map<String, Attribution> byTrace = new HashMap<>();
    result.forEach(a -> byTrace.put(a.traceId(), a));
    for (Truth t : truths) {
      Attribution a = byTrace.get(t.traceId());
      assertThat(a.engineAdapter()).isEqualTo("TensorRT-LLM");
      assertThat(a.notes())
          .contains(
              "disaggregated (TensorRT-LLM's context-only finish and KV-transfer time): prefill on ctx-0,"
                  + " decode on gen-0");
      assertThat(Math.abs(a.ttftNs() - t.ttft())).isLessThanOrEqualTo(10 * US);
      for (String c : TtftComponent.ids()) {
        long truth = t.components().getOrDefault(c, 0L);
        assertThat(Math.abs(a.component(c) - truth))
            .as("%s of %s: %s", c, t.traceId(), a.components())
            .isLessThanOrEqualTo(10 * US);
      }
      assertThat(a.criticalPath())
          .filteredOn(x -> x.component().equals("kv_transfer"))
          .extracting(Attribution.Segment::span)
          .containsOnly("kv_cache_transfer (the engine's transfer time)");
    }
  }

  /**
   * TensorRT-LLM's llm_request: arrival to the final response, latencies in seconds from arrival.
   */
  private static SpanRecord worker(
      String trace,
      String id,
      String parent,
      String host,
      long arrival,
      long end,
      long scheduled,
      long first,
      long last,
      String finish,
      int completion,
      long kvNs,
      List<SpanRecord.Event> events) {
    Map<String, String> a = new HashMap<>();
    a.put("gen_ai.request.id", "2");
    a.put("gen_ai.usage.prompt_tokens", "1024");
    a.put("gen_ai.usage.completion_tokens", Integer.toString(completion));
    a.put("gen_ai.latency.time_in_queue", Double.toString((scheduled - arrival) / 1e9));
    a.put("gen_ai.latency.time_to_first_token", Double.toString((first - arrival) / 1e9));
    a.put("gen_ai.latency.e2e", Double.toString((last - arrival) / 1e9));
    a.put("gen_ai.latency.kv_cache_transfer_time", Double.toString(kvNs / 1e9));
    a.put("gen_ai.response.finish_reasons", finish);
    return new SpanRecord(
        trace,
        id,
        parent,
        "llm_request",
        "Server",
        "unknown_service",
        "",
        host,
        "trt.llm",
        host.replace("-host", "-0"),
        arrival,
        end,
        a,
        events,
        List.of());
  }
}
