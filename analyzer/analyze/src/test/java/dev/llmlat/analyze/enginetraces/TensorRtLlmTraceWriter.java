package dev.llmlat.analyze.enginetraces;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes requests the way TensorRT-LLM's own OpenTelemetry code does ({@code trtllm-serve
 * --otlp_traces_endpoint ...} with {@code return_perf_metrics: true}, PyTorch backend), with no
 * llmlat SDK involved.
 *
 * <p>Followed sources (repository NVIDIA/TensorRT-LLM, feature added by PR #5897 "Add opentelemetry
 * tracing"):
 *
 * <ul>
 *   <li>{@code tensorrt_llm/llmapi/tracing.py} at 0fb7f7586fda3d4c584a608332c8d498a425d9b1: the
 *       tracer ({@code TracerProvider()} with the SDK default resource, one {@code
 *       BatchSpanProcessor} and an OTLP gRPC/HTTP exporter), the attribute keys and the event
 *       names.
 *   <li>{@code tensorrt_llm/executor/result.py}, {@code GenerationResultBase.do_tracing}, as on
 *       main (read from the mirror JunyiXu-nv/TensorRT-LLM at
 *       10d0af85c38509b15e3ce9985824d53e13155d8c; the earlier draft is zhanghaotong/TensorRT-LLM at
 *       bb6ba8c2): one {@code llm_request} SERVER span per finished request, parented on the {@code
 *       traceparent} the server received, started at the executor's arrival time, ended when the
 *       result handler saw the final response.
 *   <li>{@code tensorrt_llm/metrics/perf_utils.py} ({@code process_req_perf_metrics}): how TTFT,
 *       end-to-end and queue latencies are derived from the request's perf-metric timestamps.
 *   <li>{@code tensorrt_llm/llmapi/llm.py}: {@code init_tracer("trt.llm", endpoint)} (the scope
 *       name) and the arrival stamp, taken on the steady clock right after tokenization, and only
 *       when {@code return_perf_metrics} is on.
 * </ul>
 *
 * <p>What is not in the truth and is filled with plausible values: the sampling parameters
 * (temperature 1.0, top_p 1.0, n 1, max_tokens), the executor's integer request id (2, 3, ... in
 * arrival order, as one process's counter would hand them out), and the KV-cache size on the
 * transfer-end event (prompt tokens x 128 KiB). The KV transfer, which TensorRT-LLM stamps on the
 * generation server of a disaggregated deployment, is placed where the truth says it happened: it
 * ends when the request is first scheduled. TensorRT-LLM puts nothing per process into the
 * resource, so {@code instance} is ignored.
 */
public final class TensorRtLlmTraceWriter implements EngineTraceWriter {

  /** The instrumentation scope: {@code init_tracer("trt.llm", ...)}. */
  public static final String SCOPE = "trt.llm";

  /** The only span TensorRT-LLM's engine side creates. */
  public static final String SPAN_NAME = "llm_request";

  /**
   * The disaggregated proxy's span ({@code @trace_span("disaggregated_request")}); not written
   * here.
   */
  public static final String DISAGG_PROXY_SPAN_NAME = "disaggregated_request";

  public static final String ATTR_TEMPERATURE = "gen_ai.request.temperature";
  public static final String ATTR_TOP_P = "gen_ai.request.top_p";
  public static final String ATTR_MAX_TOKENS = "gen_ai.request.max_tokens";
  public static final String ATTR_N = "gen_ai.request.n";
  public static final String ATTR_REQUEST_ID = "gen_ai.request.id";
  public static final String ATTR_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens";
  public static final String ATTR_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens";
  public static final String ATTR_TTFT = "gen_ai.latency.time_to_first_token";
  public static final String ATTR_E2E = "gen_ai.latency.e2e";
  public static final String ATTR_QUEUE = "gen_ai.latency.time_in_queue";
  public static final String ATTR_FINISH_REASONS = "gen_ai.response.finish_reasons";
  public static final String ATTR_KV_TRANSFER = "gen_ai.latency.kv_cache_transfer_time";
  public static final String EVENT_KV_START = "kv_cache_transfer_start";
  public static final String EVENT_KV_END = "kv_cache_transfer_end";
  public static final String EVENT_ATTR_KV_SIZE = "kv_cache_size";

  /** The opentelemetry-sdk version in the resource; TensorRT-LLM does not pin one. */
  static final String PYTHON_SDK_VERSION = "1.38.0";

  /** BatchSpanProcessor's default max_export_batch_size. */
  static final int MAX_EXPORT_BATCH = 512;

  /** Llama-3-8B in fp16: 32 layers x 8 KV heads x 128 dims x (K, V) x 2 bytes. */
  static final long KV_BYTES_PER_TOKEN = 32L * 8 * 128 * 2 * 2;

  /** The executor's first client id: its counter starts at 1 and is incremented before use. */
  static final long FIRST_CLIENT_ID = 2;

  static final int SPAN_KIND_SERVER = 2;

  /** SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK, which the Python exporter sets on every span. */
  static final int FLAG_HAS_IS_REMOTE = 0x100;

  /** SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK: the parent came from a {@code traceparent} header. */
  static final int FLAG_IS_REMOTE = 0x200;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HexFormat HEX = HexFormat.of();

  @Override
  public String engine() {
    return "tensorrt-llm";
  }

  @Override
  public List<String> write(List<RequestTruth> requests, String instance) {
    // One process hands out client ids in submission (arrival) order.
    List<RequestTruth> byArrival = new ArrayList<>(requests);
    byArrival.sort(Comparator.comparingLong(RequestTruth::arrivalNs));
    Map<RequestTruth, Long> clientIds = new IdentityHashMap<>();
    for (int i = 0; i < byArrival.size(); i++) {
      clientIds.put(byArrival.get(i), FIRST_CLIENT_ID + i);
    }
    // The BatchSpanProcessor exports spans in the order they ended.
    List<RequestTruth> byEnd = new ArrayList<>(requests);
    byEnd.sort(Comparator.comparingLong(RequestTruth::finishNs));

    List<String> out = new ArrayList<>();
    for (int from = 0; from < byEnd.size(); from += MAX_EXPORT_BATCH) {
      List<RequestTruth> batch =
          byEnd.subList(from, Math.min(byEnd.size(), from + MAX_EXPORT_BATCH));
      ObjectNode doc = JSON.createObjectNode();
      ObjectNode rs = doc.putArray("resourceSpans").addObject();
      rs.putObject("resource").set("attributes", resource());
      ObjectNode ss = rs.putArray("scopeSpans").addObject();
      ss.putObject("scope").put("name", SCOPE);
      ArrayNode spans = ss.putArray("spans");
      for (RequestTruth r : batch) {
        spans.add(span(r, clientIds.get(r)));
      }
      try {
        out.add(JSON.writeValueAsString(doc));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }
    return out;
  }

  /** The Python SDK's default resource: telemetry.sdk.* then service.name; no host, no process. */
  private static ArrayNode resource() {
    ArrayNode a = JSON.createArrayNode();
    str(a, "telemetry.sdk.language", "python");
    str(a, "telemetry.sdk.name", "opentelemetry");
    str(a, "telemetry.sdk.version", PYTHON_SDK_VERSION);
    str(a, "service.name", "unknown_service");
    return a;
  }

  private static ObjectNode span(RequestTruth r, long clientId) {
    ObjectNode s = JSON.createObjectNode();
    boolean remoteParent = r.parentSpanId() != null && !r.parentSpanId().isEmpty();
    s.put("traceId", r.traceId());
    s.put("spanId", spanId(r));
    if (remoteParent) {
      s.put("parentSpanId", r.parentSpanId());
    }
    s.put("flags", FLAG_HAS_IS_REMOTE | (remoteParent ? FLAG_IS_REMOTE : 0));
    s.put("name", SPAN_NAME);
    s.put("kind", SPAN_KIND_SERVER);
    // start_time=int((arrival_time + time.time() - time.monotonic()) * 1e9): float seconds.
    s.put("startTimeUnixNano", Long.toString(viaFloatSeconds(r.arrivalNs())));
    // Ended by leaving the `with` block in the result handler, after the final response.
    s.put("endTimeUnixNano", Long.toString(r.finishNs()));

    ArrayNode a = s.putArray("attributes");
    dbl(a, ATTR_TEMPERATURE, 1.0);
    dbl(a, ATTR_TOP_P, 1.0);
    // top_k is None unless the client sets it, and None attributes are skipped.
    integer(
        a,
        ATTR_MAX_TOKENS,
        "length".equals(r.finishReason()) ? r.outputTokens() : Math.max(1024, r.outputTokens()));
    integer(a, ATTR_N, 1);
    integer(a, ATTR_REQUEST_ID, clientId);
    if (r.promptTokens() > 0) {
      integer(a, ATTR_PROMPT_TOKENS, r.promptTokens());
    }
    integer(a, ATTR_COMPLETION_TOKENS, r.outputTokens());
    long[] tokens = r.tokenNs();
    boolean hasTokens = tokens != null && tokens.length > 0;
    // metrics_dict.get(..., -1): a missing (or non-positive) metric reads as the int -1.
    latency(a, ATTR_TTFT, hasTokens ? r.firstTokenNs() - r.arrivalNs() : -1, false);
    latency(a, ATTR_E2E, hasTokens ? tokens[tokens.length - 1] - r.arrivalNs() : -1, false);
    latency(a, ATTR_QUEUE, r.scheduledNs() - r.arrivalNs(), true);
    if (r.finishReason() != null) {
      // json.dumps([output.finish_reason]): one string, not an array.
      str(a, ATTR_FINISH_REASONS, "[\"" + r.finishReason() + "\"]");
    }
    // end - start, both 0.0 when there was no transfer: always present, a double.
    dbl(a, ATTR_KV_TRANSFER, r.kvTransferNs() / 1e9);

    if (r.kvTransferNs() > 0) {
      long end = r.scheduledNs();
      long start = end - r.kvTransferNs();
      ArrayNode ev = s.putArray("events");
      ObjectNode e1 = ev.addObject();
      e1.put("timeUnixNano", Long.toString(viaFloatSeconds(start)));
      e1.put("name", EVENT_KV_START);
      ObjectNode e2 = ev.addObject();
      e2.put("timeUnixNano", Long.toString(viaFloatSeconds(end)));
      e2.put("name", EVENT_KV_END);
      integer(e2.putArray("attributes"), EVENT_ATTR_KV_SIZE, r.promptTokens() * KV_BYTES_PER_TOKEN);
    }
    s.putObject("status"); // never set: UNSET
    return s;
  }

  /**
   * A latency in seconds as do_tracing sets it: a double, or the int -1 when the metric is absent.
   */
  private static void latency(ArrayNode a, String key, long ns, boolean zeroAllowed) {
    if (ns > 0 || (zeroAllowed && ns == 0)) {
      dbl(a, key, ns / 1e9);
    } else {
      integer(a, key, -1);
    }
  }

  /** Unix ns that went through Python float seconds and int(x * 1e9), as TensorRT-LLM's do. */
  static long viaFloatSeconds(long unixNs) {
    double seconds = unixNs / 1e9;
    return (long) (seconds * 1e9);
  }

  /**
   * 16 hex digits, fixed per request so fixtures are reproducible (the SDK draws them at random).
   */
  private static String spanId(RequestTruth r) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      byte[] d =
          sha.digest(
              (SCOPE + "/" + r.traceId() + "/" + r.requestId()).getBytes(StandardCharsets.UTF_8));
      byte[] id = new byte[8];
      System.arraycopy(d, 0, id, 0, 8);
      if (id[0] == 0) {
        id[0] = 1;
      }
      return HEX.formatHex(id);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void str(ArrayNode a, String key, String v) {
    ObjectNode kv = a.addObject();
    kv.put("key", key);
    kv.putObject("value").put("stringValue", v);
  }

  private static void dbl(ArrayNode a, String key, double v) {
    ObjectNode kv = a.addObject();
    kv.put("key", key);
    kv.putObject("value").put("doubleValue", v);
  }

  /** Python ints go out as intValue, an int64 that OTLP/JSON writes as a decimal string. */
  private static void integer(ArrayNode a, String key, long v) {
    ObjectNode kv = a.addObject();
    kv.put("key", key);
    kv.putObject("value").put("intValue", Long.toString(v));
  }
}
