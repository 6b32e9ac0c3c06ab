package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.semconv.LlmlatSpanNames;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * vLLM V1's {@code llm_request} span (vllm/v1/engine/output_processor.py's do_tracing, names in
 * vllm/tracing.py; scope {@code vllm.llm_engine} up to 0.15, {@code vllm.tracing.otel} from 0.16):
 * a SERVER span from the frontend's {@code arrival_time} to the final output, with the {@code
 * gen_ai.latency.*} attributes in seconds. TTFT is measured from arrival; the engine core's {@code
 * time_in_queue} (queued to scheduled) and {@code time_in_model_prefill} (scheduled to first token)
 * chain back from the first token, and what remains after arrival is the frontend's and the engine
 * core's handling (input processing, IPC; from 0.17 also templating and tokenization). No model, no
 * finish reason, no per-token times.
 *
 * <p>With the per-phase spans of vLLM's open PR #44402 (siblings under the same parent, joined by
 * {@code request_id}): {@code vllm_queue}, {@code vllm_async_kv_transfer}, {@code vllm_prefill},
 * {@code vllm_decode} and one {@code vllm_step_execution} per engine step (batch composition), the
 * prefill chunks, the batch's other requests and every token's time are read too.
 */
public final class VllmAdapter implements EngineAdapter {
  static final String REQUEST = LlmlatSpanNames.REQUEST;

  /**
   * Both scopes vLLM has written its spans with: {@code vllm.llm_engine}, {@code
   * vllm.tracing.otel}.
   */
  static final String SCOPE_PREFIX = "vllm";

  // Without vLLM's scope, an unlabelled llm_request with vLLM's first-token latency is read the
  // same
  // way: vLLM sets it on every request span it writes (do_tracing), so e2e alone is not vLLM's
  // shape.
  private static final RequestRule RULE =
      new RequestRule(
          SpanCondition.name(REQUEST),
          SpanCondition.anyOf(
              SpanCondition.scopeStartsWith(SCOPE_PREFIX),
              SpanCondition.allOf(SpanCondition.layer(""), SpanCondition.has(GenAiLatency.TTFT))),
          SpanCondition.scopeStartsWith(SCOPE_PREFIX),
          Set.of());

  static final String KV_TRANSFER_PARAMS = "kv_transfer_params";
  static final String REQUEST_ID = "gen_ai.request.id";
  private static final java.util.regex.Pattern REMOTE_DECODE =
      java.util.regex.Pattern.compile("\"do_remote_decode\"\\s*:\\s*(true|\"true\")");
  private static final java.util.regex.Pattern REMOTE_PREFILL =
      java.util.regex.Pattern.compile("\"do_remote_prefill\"\\s*:\\s*(true|\"true\")");

  @Override
  public String name() {
    return "vLLM";
  }

  @Override
  public String cannotShow() {
    return "before 0.17 the templating and tokenization (stamped before arrival, inside network_in); without the"
        + " per-phase spans, prefill chunks, batch composition and per-token times";
  }

  @Override
  public RequestRule requestRule() {
    return RULE;
  }

  /**
   * The request's {@code kv_transfer_params} (a disaggregating proxy's, as vLLM's request span
   * carries them): {@code do_remote_decode} on the prefill instance's request, {@code
   * do_remote_prefill} on the decode instance's; as one JSON attribute or flattened keys.
   */
  @Override
  public String roleEvidence() {
    return KV_TRANSFER_PARAMS;
  }

  /**
   * The request id both halves carry where a proxy gave both the same id and no traceparent:
   * P2pNccl's {@code ___prefill_addr_..___decode_addr_..} ids, llm-d's {@code x-request-id}.
   */
  @Override
  public String joinKey(SpanRecord s) {
    return s.attr(REQUEST_ID);
  }

  @Override
  public String joinKeyAttribute() {
    return REQUEST_ID;
  }

  @Override
  public String role(SpanRecord s) {
    for (java.util.Map.Entry<String, String> a : s.attributes().entrySet()) {
      String key = a.getKey();
      if (!key.contains(KV_TRANSFER_PARAMS)) {
        continue;
      }
      String v = a.getValue();
      if ((key.endsWith("do_remote_decode") && "true".equalsIgnoreCase(v))
          || REMOTE_DECODE.matcher(v).find()) {
        return PREFILL;
      }
      if ((key.endsWith("do_remote_prefill") && "true".equalsIgnoreCase(v))
          || REMOTE_PREFILL.matcher(v).find()) {
        return DECODE;
      }
    }
    return "";
  }

  @Override
  public EngineRequest read(SpanRecord e, TraceContext context) {
    EngineRequest.Builder b = Attrs.genAiRequest(name(), e);
    long arrival = e.startNs();
    long ttft = Attrs.seconds(e, GenAiLatency.TTFT);
    long e2e = Attrs.seconds(e, GenAiLatency.E2E);
    long queue = Attrs.seconds(e, GenAiLatency.QUEUE);
    long prefill = Attrs.seconds(e, GenAiLatency.PREFILL);
    if (e2e >= 0) {
      b.end(arrival + e2e);
    }
    List<SpanRecord> phases = phases(e, context);
    SpanRecord prefillSpan = named(phases, "vllm_prefill");
    SpanRecord kvSpan = named(phases, "vllm_async_kv_transfer");
    long first = ttft >= 0 ? arrival + ttft : prefillSpan != null ? prefillSpan.endNs() : -1;
    if (first < 0) {
      b.note("no " + GenAiLatency.TTFT + ": the first token is unknown");
      return b.build();
    }
    b.firstToken(first);
    long scheduled =
        prefillSpan != null
            ? prefillSpan.startNs()
            : kvSpan != null
                ? kvSpan.endNs()
                : prefill >= 0 && prefill <= ttft ? first - prefill : -1;
    if (scheduled >= 0) {
      b.scheduled(scheduled);
      long queued = queue >= 0 && queue <= scheduled - arrival ? scheduled - queue : arrival;
      b.queued(queued);
      if (queued > arrival) {
        b.handling(arrival, queued, "arrival to the scheduler's queue");
      }
      if (kvSpan != null) {
        b.kvTransfer(kvSpan.startNs(), kvSpan.endNs(), kvSpan.name());
      }
      List<SpanRecord> steps = named(phases, "vllm_step_execution", scheduled, first);
      if (steps.isEmpty()) {
        b.prefill(scheduled, first, prefillSpan != null ? "vllm_prefill" : GenAiLatency.PREFILL);
        b.note(
            "vLLM traces no prefill chunks without its per-phase spans: scheduled to first token is one interval");
      }
      for (SpanRecord s : steps) {
        int batch =
            (int) (s.longAttr("num_prefill_requests", 0) + s.longAttr("num_decode_requests", 0));
        b.prefill(
            new EngineRequest.Prefill(
                s.startNs(),
                Math.min(s.endNs(), first),
                s.name(),
                "",
                0,
                s.longAttr("total_scheduled_tokens", 0),
                batch,
                List.of()));
      }
    } else {
      b.note(
          queue >= 0
              ? "no " + GenAiLatency.PREFILL + ": queue placed at arrival"
              : "no queue or prefill latency: only TTFT is known");
      if (queue >= 0 && queue <= ttft) {
        b.scheduled(arrival + queue)
            .prefill(arrival + queue, first, GenAiLatency.QUEUE + " to " + GenAiLatency.TTFT);
      }
    }
    List<SpanRecord> decodeSteps = named(phases, "vllm_step_execution", first, Long.MAX_VALUE);
    if (!decodeSteps.isEmpty()) {
      b.decodeTokens(decodeSteps.stream().mapToLong(SpanRecord::endNs).sorted().toArray());
    } else {
      b.note(
          "vLLM keeps no per-token times without its per-phase spans: inter-token gaps are not analysed");
    }
    for (SpanRecord p : phases) {
      if ("true".equals(p.attr("preempted"))) {
        b.preempted(p.endNs());
      }
    }
    return b.build();
  }

  /**
   * The per-phase spans of this request: siblings under the same parent, with its request id as
   * prefix.
   */
  private static List<SpanRecord> phases(SpanRecord e, TraceContext context) {
    String id = e.attr("gen_ai.request.id");
    List<SpanRecord> out = new ArrayList<>();
    for (SpanRecord s : context.trace()) {
      if (s.name().startsWith("vllm_")
          && s.parentSpanId().equals(e.parentSpanId())
          && (id.isEmpty() || s.attr("request_id").startsWith(id))) {
        out.add(s);
      }
    }
    out.sort(Comparator.comparingLong(SpanRecord::startNs));
    return out;
  }

  private static SpanRecord named(List<SpanRecord> phases, String name) {
    return phases.stream().filter(s -> s.name().equals(name)).findFirst().orElse(null);
  }

  /** Spans of that name that start in [from, to). */
  private static List<SpanRecord> named(List<SpanRecord> phases, String name, long from, long to) {
    return phases.stream()
        .filter(s -> s.name().equals(name) && s.startNs() >= from && s.startNs() < to)
        .toList();
  }
}
