package dev.llmlat.attribution;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Clock evidence between the two instances of a disaggregated request, where no CLIENT span calls
 * the prefill instance alone (a PD router that sends to both at once and traces nothing of its
 * own):
 *
 * <ul>
 *   <li>SGLang's prefill server ends {@code prefill_transfer_kv_cache} when the KV cache was
 *       delivered and the decode server ends {@code decode_transferred} when it saw it arrive: the
 *       two ends are one moment, as the ends of one collective are across tensor-parallel ranks;
 *   <li>llm-d's sidecar times its call to the prefill instance ({@code llm_d.pd_proxy.prefill},
 *       with the request id the vLLM span carries in {@code gen_ai.request.id}): a round trip,
 *       although the vLLM span's parent is the incoming traceparent's span, not the sidecar's.
 * </ul>
 */
final class DisaggregatedHandoffs {
  static final String SGLANG_SENT = "prefill_transfer_kv_cache";
  static final String SGLANG_RECEIVED = "decode_transferred";
  static final String LLMD_PREFILL_CALL = "llm_d.pd_proxy.prefill";
  static final String LLMD_REQUEST_ID = "llm_d.pd_proxy.request_id";

  /**
   * Nominal delay of an "ends together" pair: the two stamps are polls of one event, not an
   * exchange.
   */
  private static final long SIMULTANEOUS_DELAY_NS = 2_000_000;

  private DisaggregatedHandoffs() {}

  static void addEvidence(
      List<SpanRecord> spans, Map<String, Map<String, ClockSkewEstimator.Edge>> edges) {
    Map<String, SpanRecord> sent = new HashMap<>();
    Map<String, SpanRecord> received = new HashMap<>();
    Map<String, SpanRecord> prefillCalls = new HashMap<>();
    List<SpanRecord> requests = new ArrayList<>();
    for (SpanRecord s : spans) {
      switch (s.name()) {
        case SGLANG_SENT -> sent.putIfAbsent(s.traceId(), s);
        case SGLANG_RECEIVED -> received.putIfAbsent(s.traceId(), s);
        case LLMD_PREFILL_CALL -> {
          if (!s.attr(LLMD_REQUEST_ID).isEmpty()) {
            prefillCalls.put(s.traceId() + s.attr(LLMD_REQUEST_ID), s);
          }
        }
        default -> {
          if (!prefillCalls.isEmpty() || "Server".equals(s.kind())) {
            requests.add(s);
          }
        }
      }
    }
    for (Map.Entry<String, SpanRecord> e : sent.entrySet()) {
      SpanRecord d = received.get(e.getKey());
      SpanRecord p = e.getValue();
      if (d != null && !d.clockDomain().equals(p.clockDomain())) {
        ClockSkewEstimator.addRoundTrip(
            edges,
            new ClockSkewEstimator.Pair(
                d.clockDomain(),
                p.clockDomain(),
                p.endNs() - d.endNs(),
                SIMULTANEOUS_DELAY_NS,
                d.endNs(),
                d.durationNs()));
      }
    }
    if (prefillCalls.isEmpty()) {
      return;
    }
    for (SpanRecord r : requests) {
      String id = r.attr("gen_ai.request.id");
      if (id.isEmpty() || r.longAttr("gen_ai.request.max_tokens", -1) != 1) {
        continue; // the sidecar's prefill call asks for one token
      }
      for (Map.Entry<String, SpanRecord> call : prefillCalls.entrySet()) {
        SpanRecord c = call.getValue();
        if (call.getKey().startsWith(r.traceId())
            && id.contains(c.attr(LLMD_REQUEST_ID))
            && !c.clockDomain().equals(r.clockDomain())
            && c.durationNs() >= r.durationNs()) {
          double offset = ((r.startNs() - c.startNs()) + (double) (r.endNs() - c.endNs())) / 2.0;
          ClockSkewEstimator.addRoundTrip(
              edges,
              new ClockSkewEstimator.Pair(
                  c.clockDomain(),
                  r.clockDomain(),
                  offset,
                  Math.max(0, c.durationNs() - r.durationNs()),
                  c.startNs() / 2 + c.endNs() / 2,
                  c.durationNs()));
        }
      }
    }
  }
}
