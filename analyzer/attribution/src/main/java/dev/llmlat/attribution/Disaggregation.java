package dev.llmlat.attribution;

import dev.llmlat.attribution.engines.EngineAdapter;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;

/**
 * A request served by a prefill and a decode instance (disaggregated serving), joined by trace id:
 * which request span is whose, and the KV transfer's GPU spans. Either side may be missing (its
 * spans not exported): then what cannot be split is said, not guessed.
 *
 * <p>Roles come from the engine where it declares them ({@link EngineAdapter#role}: vLLM's {@code
 * kv_transfer_params}, SGLang's root names, TensorRT-LLM's context-only finish), else from the GPU
 * layer: the {@code llmlat.kv_send} side is the prefill instance, {@code llmlat.kv_recv} the decode
 * instance.
 *
 * @param prefill the prefill instance's request span, or null
 * @param decode the decode instance's request span, or null
 * @param kvSend the GPU layer's send of this request's KV cache, or null
 * @param kvRecv its receive, or null
 * @param evidence how the roles were told ("kv_transfer_params", "kv_send/kv_recv", ...)
 */
record Disaggregation(
    SpanRecord prefill, SpanRecord decode, SpanRecord kvSend, SpanRecord kvRecv, String evidence) {
  static final String PREFILL = EngineAdapter.PREFILL;
  static final String DECODE = EngineAdapter.DECODE;

  boolean complete() {
    return prefill != null && decode != null;
  }

  /** The request span attribution reads (the decode side's: the client's first token is its). */
  SpanRecord primary() {
    return decode != null ? decode : prefill;
  }

  /**
   * The disaggregation of one trace, or null when nothing says it is one.
   *
   * @param requests the trace's engine request spans
   */
  static Disaggregation of(
      List<SpanRecord> requests,
      List<SpanRecord> trace,
      Function<SpanRecord, EngineAdapter> adapterOf) {
    SpanRecord send = first(trace, LlmlatSpanNames.KV_SEND);
    SpanRecord recv = first(trace, LlmlatSpanNames.KV_RECV);
    SpanRecord prefill = null;
    SpanRecord decode = null;
    String evidence = "kv_send/kv_recv";
    for (SpanRecord r : requests) {
      EngineAdapter adapter = adapterOf.apply(r);
      String role = adapter == null ? "" : adapter.role(r);
      if (prefill == null && PREFILL.equals(role) || decode == null && DECODE.equals(role)) {
        evidence = adapter.roleEvidence();
      }
      prefill = prefill == null && PREFILL.equals(role) ? r : prefill;
      decode = decode == null && DECODE.equals(role) ? r : decode;
    }
    if (prefill == null && decode == null && send == null && recv == null && requests.size() != 2) {
      return null;
    }
    List<SpanRecord> sorted = new ArrayList<>(requests);
    sorted.sort(Comparator.comparingLong(SpanRecord::startNs));
    for (SpanRecord r : sorted) {
      if (prefill == null
          && send != null
          && !r.engineInstance().equals(instance(decode))
          && sent(r, send)) {
        prefill = r;
      }
      if (decode == null
          && recv != null
          && !r.engineInstance().equals(instance(prefill))
          && received(r, recv)) {
        decode = r;
      }
    }
    // one side known: another instance's request on the trace is the other side
    for (SpanRecord r : sorted) {
      if (prefill == null
          && decode != null
          && !r.engineInstance().equals(decode.engineInstance())) {
        prefill = r;
      }
    }
    for (SpanRecord r : sorted.reversed()) {
      if (decode == null
          && prefill != null
          && !r.engineInstance().equals(prefill.engineInstance())) {
        decode = r;
      }
    }
    boolean declared = prefill != null || decode != null;
    if (prefill == null && decode == null && sorted.size() == 2 && send == null && recv == null) {
      // a proxy's prefill call asks for one token (max_tokens 1) and the decode call streams the
      // rest
      SpanRecord a = sorted.get(0);
      SpanRecord b = sorted.get(1);
      if (oneTokenCall(a) != oneTokenCall(b) && !a.engineInstance().equals(b.engineInstance())) {
        prefill = oneTokenCall(a) ? a : b;
        decode = prefill == a ? b : a;
        evidence = "the prefill call's one token (max_tokens 1)";
      }
    }
    if (prefill == null
        && decode == null
        && (send != null || recv != null)
        && sorted.stream().map(SpanRecord::engineInstance).distinct().count() >= 2) {
      // two instances and a transfer that names neither: the earlier one prefilled
      prefill = sorted.get(0);
      decode = sorted.get(sorted.size() - 1);
      evidence = "kv_send/kv_recv, by order (the spans name neither side's process)";
    }
    if (prefill == null && decode == null
        || prefill != null
            && decode != null
            && prefill != decode
            && !declared
            && prefill.engineInstance().equals(decode.engineInstance())) {
      return null; // nothing matched, or one instance did both: not disaggregated
    }
    if (prefill == decode) {
      return null;
    }
    for (SpanRecord side : new SpanRecord[] {prefill, decode}) {
      EngineAdapter adapter = side == null ? null : adapterOf.apply(side);
      if (adapter != null && !side.attr(LlmlatAttributes.JOINED_FROM_TRACE_ID).isEmpty()) {
        evidence += "; the halves' separate traces joined by " + adapter.joinKeyAttribute();
        break;
      }
    }
    return new Disaggregation(prefill, decode, send, recv, evidence);
  }

  private static String instance(SpanRecord s) {
    return s == null ? "\u0000" : s.engineInstance();
  }

  /** A request that asked for, or produced, exactly one token. */
  private static boolean oneTokenCall(SpanRecord r) {
    return r.longAttr("gen_ai.request.max_tokens", -1) == 1
        || r.longAttr("gen_ai.usage.completion_tokens", -1) == 1;
  }

  /**
   * The transfer's process is the request's ({@code pid N}), else the send began while the request
   * was open.
   */
  private static boolean sent(SpanRecord request, SpanRecord send) {
    String pid = send.attr("process.pid");
    if (request.engineInstance().startsWith("pid ")) {
      return request.engineInstance().equals("pid " + pid);
    }
    long start = send.longAttr(LlmlatAttributes.KV_RANGE_START, send.startNs());
    return start >= request.startNs() && start <= request.endNs();
  }

  /** Likewise: the receive's process, else the request began once the receive was under way. */
  private static boolean received(SpanRecord request, SpanRecord recv) {
    String pid = recv.attr("process.pid");
    if (request.engineInstance().startsWith("pid ")) {
      return request.engineInstance().equals("pid " + pid);
    }
    return request.startNs() >= recv.startNs();
  }

  private static SpanRecord first(List<SpanRecord> trace, String name) {
    SpanRecord out = null;
    for (SpanRecord s : trace) {
      if (s.name().equals(name)
          && LayerNames.GPU.equals(s.layer())
          && (out == null || s.startNs() < out.startNs())) {
        out = s;
      }
    }
    return out;
  }
}
