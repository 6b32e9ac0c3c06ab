package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.semconv.LlmlatSpanNames;
import java.util.Set;

/**
 * TensorRT-LLM's {@code llm_request} span (tensorrt_llm/llmapi/tracing.py, executor/result.py's
 * do_tracing; scope {@code trt.llm}): a SERVER span from the request's arrival (stamped after
 * tokenization) to its final response, with vLLM's latency names measured from arrival ({@code
 * time_in_queue} = first scheduled - arrival; no prefill figure), the KV-cache transfer time of
 * disaggregated serving (events {@code kv_cache_transfer_start} / {@code _end}), and no model
 * attribute. Emitted only when the request asked for perf metrics.
 */
public final class TensorRtLlmAdapter implements EngineAdapter {
  static final String SCOPE = "trt.llm";
  static final String REQUEST = LlmlatSpanNames.REQUEST;
  static final String KV_TRANSFER = "gen_ai.latency.kv_cache_transfer_time";
  // the KV-transfer time is TensorRT-LLM's alone: it identifies the span under another scope name
  private static final RequestRule RULE =
      new RequestRule(
          SpanCondition.name(REQUEST),
          SpanCondition.anyOf(SpanCondition.scope(SCOPE), SpanCondition.has(KV_TRANSFER)),
          SpanCondition.scope(SCOPE),
          Set.of());

  @Override
  public String name() {
    return "TensorRT-LLM";
  }

  @Override
  public String cannotShow() {
    return "tokenization and HTTP handling (before arrival), prefill chunks, per-token times, the model";
  }

  @Override
  public RequestRule requestRule() {
    return RULE;
  }

  /**
   * A disaggregated request's context-only half finishes {@code not_finished} (its one token goes
   * to the generation worker); the generation half is the one that received the KV cache. The
   * halves share a trace only where the caller passed trace headers to both (Dynamo does;
   * trtllm-serve's own proxy sends none, and no span carries {@code ctx_request_id}).
   */
  @Override
  public String role(SpanRecord e) {
    if (e.attr("gen_ai.response.finish_reasons").contains("not_finished")) {
      return PREFILL;
    }
    return Attrs.seconds(e, KV_TRANSFER) > 0 || e.event("kv_cache_transfer_end") != null
        ? DECODE
        : "";
  }

  @Override
  public String roleEvidence() {
    return "TensorRT-LLM's context-only finish and KV-transfer time";
  }

  @Override
  public EngineRequest read(SpanRecord e, TraceContext context) {
    EngineRequest.Builder b = Attrs.genAiRequest(name(), e);
    b.arrival(e.startNs());
    long ttft = Attrs.seconds(e, GenAiLatency.TTFT);
    long e2e = Attrs.seconds(e, GenAiLatency.E2E);
    long queue = Attrs.seconds(e, GenAiLatency.QUEUE);
    if (e2e >= 0) {
      b.end(e.startNs() + e2e);
    }
    if (ttft < 0) {
      b.note("no " + GenAiLatency.TTFT + " (perf metrics off?): the first token is unknown");
      return b.build();
    }
    long first = e.startNs() + ttft;
    b.firstToken(first);
    long scheduled = queue >= 0 && queue <= ttft ? e.startNs() + queue : e.startNs();
    if (queue < 0) {
      b.note("no " + GenAiLatency.QUEUE + ": no queue time known");
    }
    b.scheduled(scheduled);
    SpanRecord.Event start = e.event("kv_cache_transfer_start");
    SpanRecord.Event end = e.event("kv_cache_transfer_end");
    long kv = Attrs.seconds(e, KV_TRANSFER);
    if (start != null
        && end != null
        && end.timeNs() >= start.timeNs()
        && start.timeNs() >= scheduled
        && end.timeNs() <= first) {
      // a generation worker: scheduled, it waits for the KV cache, then runs its first step
      b.kvTransfer(start.timeNs(), end.timeNs(), "kv_cache_transfer");
      b.prefill(end.timeNs(), first, "kv_cache_transfer_end to time_to_first_token");
    } else {
      b.prefill(scheduled, first, "time_in_queue to time_to_first_token");
    }
    if (start != null && end != null && end.timeNs() >= start.timeNs()) {
      if (start.timeNs() < scheduled || end.timeNs() > first) {
        b.kvTransfer(start.timeNs(), end.timeNs(), "kv_cache_transfer");
      }
    } else if (kv > 0) {
      // no events: the generation worker transfers after first scheduling, inside the prefill
      // window
      b.kvTransfer(scheduled, Math.min(first, scheduled + kv), KV_TRANSFER);
      b.note("KV-cache transfer placed at the start of the prefill window (no transfer events)");
    }
    b.note("TensorRT-LLM stamps arrival after tokenization: that time is inside network_in");
    b.note(
        "the time from first scheduled to the first token is one prefill interval: chunks and steps are not traced");
    return b.build();
  }
}
