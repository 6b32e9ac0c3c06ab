package dev.llmlat.analyze.enginetraces;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What vLLM's own OpenTelemetry code exports for finished requests, as OTLP/JSON.
 *
 * <p>Follows github.com/vllm-project/vllm at the release tags below (read from a mirror that
 * carries the upstream tags: v0.11.0 = commit b8b302cde, v0.16.0 = commit 89a77b108, v0.21.0 =
 * commit ad7125a43, the latest release read; upstream main up to 2026-06-24, e7df23228, is the same
 * here):
 *
 * <ul>
 *   <li>{@code vllm/v1/engine/output_processor.py}, {@code OutputProcessor.do_tracing}: one {@code
 *       llm_request} span per finished request, kind SERVER, started at the frontend's {@code
 *       arrival_time} (float seconds, converted with {@code int(t * 1e9)}), ended when the frontend
 *       handles the request's final output; parent = the span in the request's {@code traceparent}.
 *   <li>{@code vllm/tracing.py} (up to v0.15) and {@code vllm/tracing/{__init__,otel,utils}.py}
 *       (from v0.16, PR #31162): the attribute names, {@code init_tracer}, the resource.
 *   <li>{@code vllm/v1/metrics/stats.py}: which timestamps the latencies are computed from.
 *   <li>{@code vllm/v1/engine/input_processor.py} (v0.16) and {@code vllm/renderers/base.py} (from
 *       v0.17, PR #34560): where {@code arrival_time} is stamped - after chat templating and
 *       tokenization up to v0.16, before them from v0.17 on.
 * </ul>
 *
 * <p>{@link #withPhaseSpans()} adds the per-phase spans of the open PR vllm-project/vllm#44402
 * ("[Core] Implement request lifecycle spans and root span hierarchy"), as written in its branch
 * (github.com/Kaiyuan-Zhang/vllm commit 9722cc3986ecdbec93fe420dec8e043701f6a3cd: {@code
 * vllm/v1/request.py} {@code Request.emit_span}/{@code trace_*}, {@code
 * vllm/v1/core/sched/scheduler.py}, {@code vllm/v1/engine/core.py}): {@code vllm_queue}, {@code
 * vllm_async_kv_transfer}, {@code vllm_prefill}, {@code vllm_decode} and one {@code
 * vllm_step_execution} per engine step, INTERNAL, exported by the EngineCore process, children of
 * the {@code traceparent} span (siblings of {@code llm_request}, not its children).
 *
 * <p>See {@code src/test/resources/engine-traces/vllm.md} for the facts and the mapping from {@link
 * RequestTruth}. Values the truth lacks are fixture choices: sampling parameters (top_p 1.0,
 * temperature 1.0, n 1, max_tokens), the OpenTelemetry SDK version, process ids (derived from
 * {@code instance}) and span ids (derived from the request).
 */
public final class VllmTraceWriter implements EngineTraceWriter {

  /** Released behaviours of the {@code llm_request} span. */
  public enum Release {
    /**
     * v0.10.2 (PR #20372) to v0.15.x: tracer from {@code init_tracer("vllm.llm_engine", ...)}, a
     * default resource (nothing per process), span started at the post-tokenization arrival.
     */
    V0_11,
    /**
     * v0.16.x: span made by {@code instrument_manual} (scope {@code vllm.tracing.otel}), resource
     * gains {@code vllm.instrumenting_module_name} and {@code vllm.process_id}; still started at
     * the post-tokenization arrival.
     */
    V0_16,
    /**
     * v0.17.0 to v0.21.x (latest release read): as V0_16, but arrival stamped before templating.
     */
    V0_21
  }

  static final String SDK_VERSION = "1.35.0";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HexFormat HEX = HexFormat.of();
  private static final int KIND_INTERNAL = 1;
  private static final int KIND_SERVER = 2;

  /**
   * SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK when the parent is
   * remote.
   */
  private static final int FLAGS_LOCAL_OR_ROOT = 0x100;

  private static final int FLAGS_REMOTE_PARENT = 0x300;

  private final Release release;
  private final boolean phaseSpans;

  private VllmTraceWriter(Release release, boolean phaseSpans) {
    this.release = release;
    this.phaseSpans = phaseSpans;
  }

  /** The released {@code llm_request} span of the latest release read (v0.21). */
  public static VllmTraceWriter v1() {
    return new VllmTraceWriter(Release.V0_21, false);
  }

  /** The released {@code llm_request} span as {@code release} writes it. */
  public static VllmTraceWriter v1(Release release) {
    return new VllmTraceWriter(release, false);
  }

  /** v0.21's {@code llm_request} plus the EngineCore phase spans of PR #44402. */
  public static VllmTraceWriter withPhaseSpans() {
    return new VllmTraceWriter(Release.V0_21, true);
  }

  @Override
  public String engine() {
    return "vllm";
  }

  @Override
  public List<String> write(List<RequestTruth> requests, String instance) {
    int frontendPid = 1000 + Math.floorMod(hash("pid/" + instance).hashCode(), 60_000);
    List<String> docs = new ArrayList<>();

    // API server process: one llm_request per finished request, exported in end order.
    List<ObjectNode> spans = new ArrayList<>();
    for (RequestTruth r :
        requests.stream().sorted(Comparator.comparingLong(RequestTruth::finishNs)).toList()) {
      spans.add(llmRequest(r, instance));
    }
    Map<String, Object> frontend = new LinkedHashMap<>();
    if (release != Release.V0_11) {
      frontend.put("vllm.instrumenting_module_name", "vllm.llm_engine");
      frontend.put("vllm.process_id", Integer.toString(frontendPid));
    }
    String scope = release == Release.V0_11 ? "vllm.llm_engine" : "vllm.tracing.otel";
    docs.add(document(frontend, scope, spans));

    if (phaseSpans) {
      List<ObjectNode> core = new ArrayList<>();
      for (RequestTruth r : requests) {
        core.addAll(phaseSpans(r, requests, instance));
      }
      core.sort(Comparator.comparingLong(s -> Long.parseLong(s.path("endTimeUnixNano").asText())));
      Map<String, Object> engineCore = new LinkedHashMap<>();
      engineCore.put("vllm.instrumenting_module_name", "vllm.engine_core");
      engineCore.put("vllm.process_id", Integer.toString(frontendPid + 97));
      engineCore.put("vllm.process_kind", "engine_core");
      engineCore.put("vllm.process_name", "EngineCore");
      docs.add(document(engineCore, "vllm.tracing.otel", core));
    }
    return docs;
  }

  /** When vLLM's {@code arrival_time} is stamped, for this release. */
  private long arrivalNs(RequestTruth r) {
    return release == Release.V0_21 ? r.receivedNs() : r.arrivalNs();
  }

  private ObjectNode llmRequest(RequestTruth r, String instance) {
    long arrival = arrivalNs(r);
    long lastToken = r.tokenNs()[r.tokenNs().length - 1];
    // Python keeps arrival_time in float seconds; intervals are taken from the truth's nanoseconds.
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("gen_ai.latency.time_to_first_token", seconds(r.firstTokenNs() - arrival));
    a.put("gen_ai.latency.e2e", seconds(lastToken - arrival));
    a.put("gen_ai.latency.time_in_queue", seconds(r.scheduledNs() - r.arrivalNs()));
    a.put("gen_ai.usage.prompt_tokens", (long) r.promptTokens());
    a.put("gen_ai.usage.completion_tokens", (long) r.outputTokens());
    a.put("gen_ai.latency.time_in_model_prefill", seconds(r.firstTokenNs() - r.scheduledNs()));
    a.put("gen_ai.latency.time_in_model_decode", seconds(lastToken - r.firstTokenNs()));
    a.put("gen_ai.latency.time_in_model_inference", seconds(lastToken - r.scheduledNs()));
    a.put("gen_ai.request.id", r.requestId());
    a.put("gen_ai.request.top_p", 1.0);
    a.put("gen_ai.request.max_tokens", maxTokens(r));
    a.put("gen_ai.request.temperature", 1.0);
    a.put("gen_ai.request.n", 1L);
    return span(r, instance, "llm_request", KIND_SERVER, pythonNs(arrival), r.finishNs(), a, 0);
  }

  private List<ObjectNode> phaseSpans(RequestTruth r, List<RequestTruth> all, String instance) {
    String internalId =
        r.requestId() + "-" + hash("suffix/" + instance + "/" + r.requestId()).substring(0, 8);
    long lastToken = r.tokenNs()[r.tokenNs().length - 1];
    List<ObjectNode> out = new ArrayList<>();
    int n = 0;
    // Request.arrival_time_ns = int(arrival_time * 1e9), closed by trace_end_queuing() in
    // schedule().
    out.add(
        phase(
            r,
            instance,
            "vllm_queue",
            pythonNs(arrivalNs(r)),
            r.scheduledNs(),
            internalId,
            null,
            n++));
    boolean kv = r.kvTransferNs() > 0;
    if (kv) {
      // Started when schedule() puts the request in WAITING_FOR_REMOTE_KVS, ended when a later
      // schedule() promotes it, the pass that then schedules it.
      long start = Math.max(r.arrivalNs(), r.scheduledNs() - r.kvTransferNs());
      out.add(
          phase(
              r,
              instance,
              "vllm_async_kv_transfer",
              start,
              r.scheduledNs(),
              internalId,
              null,
              n++));
    } else {
      // prefill_start_time_ns set in schedule(); closed in update_from_output() when tokens appear.
      out.add(
          phase(
              r,
              instance,
              "vllm_prefill",
              r.scheduledNs(),
              r.firstTokenNs(),
              internalId,
              null,
              n++));
    }
    // With KVs loaded num_computed_tokens > 0, so decode starts at scheduling; else at first token.
    long decodeStart = kv ? r.scheduledNs() : r.firstTokenNs();
    out.add(phase(r, instance, "vllm_decode", decodeStart, lastToken, internalId, null, n++));

    if (!r.parentSpanId().isEmpty()) { // vllm_step_execution only for requests with trace headers
      for (Step s : steps(r)) {
        Map<String, Object> batch = batchOf(s, all);
        Map<String, Object> at = new LinkedHashMap<>();
        at.put("phase", s.isNew ? "prefill" : "decode");
        at.putAll(batch);
        out.add(phase(r, instance, "vllm_step_execution", s.start, s.end, internalId, at, n++));
      }
    }
    return out;
  }

  /** One engine step that ran this request: its prefill chunks, then one step per further token. */
  private record Step(long start, long end, boolean isNew, int tokens) {}

  private static List<Step> steps(RequestTruth r) {
    List<Step> steps = new ArrayList<>();
    List<RequestTruth.Chunk> chunks = r.prefillChunks();
    for (int i = 0; i < chunks.size(); i++) {
      RequestTruth.Chunk c = chunks.get(i);
      // batch_end_time_ns is taken after the sampled tokens are back: the first token's time.
      long end = i == chunks.size() - 1 ? Math.max(c.endNs(), r.firstTokenNs()) : c.endNs();
      steps.add(new Step(c.startNs(), end, i == 0, c.tokens()));
    }
    long[] t = r.tokenNs();
    for (int i = 1; i < t.length; i++) {
      steps.add(new Step(t[i - 1], t[i], false, 1));
    }
    return steps;
  }

  /** num_prefill_requests / num_decode_requests / total_scheduled_tokens of the step's batch. */
  private static Map<String, Object> batchOf(Step step, List<RequestTruth> all) {
    long newReqs = 0;
    long cached = 0;
    long tokens = 0;
    for (RequestTruth o : all) {
      for (Step s : steps(o)) {
        if (s.start == step.start && s.end == step.end) {
          if (s.isNew) {
            newReqs++;
          } else {
            cached++;
          }
          tokens += s.tokens;
        }
      }
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("num_prefill_requests", newReqs);
    m.put("num_decode_requests", cached);
    m.put("total_scheduled_tokens", tokens);
    return m;
  }

  private ObjectNode phase(
      RequestTruth r,
      String instance,
      String name,
      long start,
      long end,
      String internalId,
      Map<String, Object> extra,
      int n) {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("request_id", internalId);
    if (extra != null) {
      a.putAll(extra);
    }
    return span(r, instance, name, KIND_INTERNAL, start, end, a, n);
  }

  private ObjectNode span(
      RequestTruth r,
      String instance,
      String name,
      int kind,
      long start,
      long end,
      Map<String, Object> attributes,
      int n) {
    boolean traced = !r.parentSpanId().isEmpty();
    String seed = instance + "/" + r.requestId() + "/" + name + "/" + n;
    ObjectNode s = JSON.createObjectNode();
    // No traceparent: the SDK starts a fresh trace (a new root) for each span.
    s.put("traceId", traced ? r.traceId() : nonZero(hash("trace/" + seed), 32));
    s.put("spanId", nonZero(hash("span/" + seed), 16));
    if (traced) {
      s.put("parentSpanId", r.parentSpanId());
    }
    s.put("flags", traced ? FLAGS_REMOTE_PARENT : FLAGS_LOCAL_OR_ROOT);
    s.put("name", name);
    s.put("kind", kind);
    s.put("startTimeUnixNano", Long.toString(start));
    s.put("endTimeUnixNano", Long.toString(end));
    s.set("attributes", attributes(attributes));
    s.putObject("status");
    return s;
  }

  private static String document(
      Map<String, Object> extraResource, String scope, List<ObjectNode> spans) {
    // Resource.create(): SDK defaults, then vLLM's attributes, then service.name if still unset.
    Map<String, Object> res = new LinkedHashMap<>();
    res.put("telemetry.sdk.language", "python");
    res.put("telemetry.sdk.name", "opentelemetry");
    res.put("telemetry.sdk.version", SDK_VERSION);
    res.putAll(extraResource);
    res.put("service.name", "unknown_service");
    ObjectNode root = JSON.createObjectNode();
    ObjectNode rs = root.putArray("resourceSpans").addObject();
    rs.putObject("resource").set("attributes", attributes(res));
    ObjectNode ss = rs.putArray("scopeSpans").addObject();
    ss.putObject("scope").put("name", scope);
    ArrayNode list = ss.putArray("spans");
    spans.forEach(list::add);
    try {
      return JSON.writeValueAsString(root);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Python types as the OTLP encoder maps them: str, int (int64 as a JSON string), float, bool. */
  private static ArrayNode attributes(Map<String, Object> m) {
    ArrayNode list = JSON.createArrayNode();
    m.forEach(
        (k, v) -> {
          ObjectNode kv = list.addObject();
          kv.put("key", k);
          ObjectNode value = kv.putObject("value");
          switch (v) {
            case String s -> value.put("stringValue", s);
            case Long l -> value.put("intValue", Long.toString(l));
            case Integer i -> value.put("intValue", Integer.toString(i));
            case Double d -> value.put("doubleValue", d);
            case Boolean b -> value.put("boolValue", b);
            default -> throw new IllegalArgumentException(k + ": " + v);
          }
        });
    return list;
  }

  private static long maxTokens(RequestTruth r) {
    return "length".equals(r.finishReason())
        ? r.outputTokens()
        : Math.max(1024, r.outputTokens() + 1);
  }

  private static double seconds(long ns) {
    return ns / 1e9;
  }

  /**
   * {@code int(t * 1e9)} of a {@code time.time()} float: the nanoseconds vLLM passes as start_time.
   */
  static long pythonNs(long ns) {
    double t = ns / 1e9;
    return (long) (t * 1e9);
  }

  private static String nonZero(String hex, int len) {
    String s = hex.substring(0, len);
    return s.chars().allMatch(c -> c == '0') ? "1" + s.substring(1) : s;
  }

  private static String hash(String s) {
    try {
      return HEX.formatHex(
          MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
