package dev.llmlat.attribution;

import dev.llmlat.attribution.engines.EngineAdapter;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One request, one trace: where an engine put the prefill and the decode half of a disaggregated
 * request in separate traces (no traceparent between them), the halves are joined by the engine's
 * own key ({@link EngineAdapter#joinKey}: SGLang's {@code bootstrap_room}, a P2pNccl request id,
 * TensorRT-LLM's context request id). Every span of the other traces takes the kept trace's id and
 * keeps its own as {@link LlmlatAttributes#JOINED_FROM_TRACE_ID}.
 *
 * <p>The kept trace is the one the client's request is on (a gateway or client span), else the
 * decode half's where the engine names the roles (the client's first token is its), else the
 * earlier half's. Spans without a key pass through untouched: the common path costs one attribute
 * lookup per span.
 */
final class JoinSplitTraces {
  private static final Set<String> KEY_ATTRIBUTES = keyAttributes();

  private JoinSplitTraces() {}

  private record Half(SpanRecord request, EngineAdapter adapter, String key) {}

  static List<SpanRecord> join(List<SpanRecord> spans) {
    if (KEY_ATTRIBUTES.isEmpty()) {
      return spans;
    }
    // request spans that carry a key, and spans a request may hang under (SGLang's "Bootstrap Room"
    // span)
    Map<String, List<Half>> byKey = new LinkedHashMap<>();
    Map<SpanKey, SpanRecord> keyedParents = new HashMap<>();
    for (SpanRecord s : spans) {
      if (!hasKey(s)) {
        continue;
      }
      EngineAdapter adapter = EngineAdapters.forRequest(s);
      if (adapter == null) {
        keyedParents.put(SpanKey.of(s), s);
      } else {
        add(byKey, s, adapter, adapter.joinKey(s));
      }
    }
    if (!keyedParents.isEmpty()) {
      for (SpanRecord s : spans) {
        SpanRecord parent =
            s.parentSpanId().isEmpty() || hasKey(s) ? null : keyedParents.get(SpanKey.parentOf(s));
        EngineAdapter adapter = parent == null ? null : EngineAdapters.forRequest(s);
        if (adapter != null) {
          add(byKey, s, adapter, adapter.joinKey(parent));
        }
      }
    }
    Map<String, String> renamed = new HashMap<>();
    Set<String> clientSide = null;
    for (List<Half> halves : byKey.values()) {
      // two halves in two traces; more (a client's id reused for retries) is no pair to join
      if (halves.size() != 2
          || halves.get(0).request().traceId().equals(halves.get(1).request().traceId())) {
        continue;
      }
      if (clientSide == null) {
        clientSide = clientSideTraces(spans);
      }
      String kept = kept(halves, clientSide);
      for (Half h : halves) {
        String from = h.request().traceId();
        if (!from.equals(kept)) {
          renamed.putIfAbsent(from, kept);
        }
      }
    }
    if (renamed.isEmpty()) {
      return spans;
    }
    List<SpanRecord> out = new ArrayList<>(spans.size());
    for (SpanRecord s : spans) {
      String to = renamed.get(s.traceId());
      boolean linked = s.links().stream().anyMatch(l -> renamed.containsKey(l.traceId()));
      if (to == null && !linked) {
        out.add(s);
        continue;
      }
      Map<String, String> attributes = s.attributes();
      if (to != null) {
        attributes = new HashMap<>(attributes);
        attributes.put(LlmlatAttributes.JOINED_FROM_TRACE_ID, s.traceId());
      }
      List<SpanRecord.Link> links =
          !linked
              ? s.links()
              : s.links().stream()
                  .map(
                      l ->
                          new SpanRecord.Link(
                              renamed.getOrDefault(l.traceId(), l.traceId()), l.spanId()))
                  .toList();
      out.add(
          new SpanRecord(
              to == null ? s.traceId() : to,
              s.spanId(),
              s.parentSpanId(),
              s.name(),
              s.kind(),
              s.service(),
              s.layer(),
              s.host(),
              s.scope(),
              s.instance(),
              s.startNs(),
              s.endNs(),
              attributes,
              s.events(),
              links));
    }
    return out;
  }

  private static boolean hasKey(SpanRecord s) {
    for (String k : KEY_ATTRIBUTES) {
      if (!s.attr(k).isEmpty()) {
        return true;
      }
    }
    return false;
  }

  private static void add(
      Map<String, List<Half>> byKey, SpanRecord request, EngineAdapter adapter, String key) {
    if (!key.isEmpty()) {
      byKey
          .computeIfAbsent(adapter.name() + '\u0000' + key, k -> new ArrayList<>(2))
          .add(new Half(request, adapter, key));
    }
  }

  /** The trace the joined request keeps. */
  private static String kept(List<Half> halves, Set<String> clientSide) {
    for (Half h : halves) {
      if (clientSide.contains(h.request().traceId())) {
        return h.request().traceId();
      }
    }
    for (Half h : halves) {
      if (EngineAdapter.DECODE.equals(h.adapter().role(h.request()))) {
        return h.request().traceId();
      }
    }
    return halves.stream()
        .min(Comparator.comparingLong(h -> h.request().startNs()))
        .orElseThrow()
        .request()
        .traceId();
  }

  /** Traces with a span of the gateway or client layer. */
  private static Set<String> clientSideTraces(List<SpanRecord> spans) {
    Set<String> out = new HashSet<>();
    for (SpanRecord s : spans) {
      if (LayerNames.GATEWAY.equals(s.layer()) || LayerNames.CLIENT.equals(s.layer())) {
        out.add(s.traceId());
      }
    }
    return out;
  }

  private static Set<String> keyAttributes() {
    Set<String> out = new HashSet<>();
    for (EngineAdapter a : EngineAdapters.all()) {
      if (!a.joinKeyAttribute().isEmpty()) {
        out.add(a.joinKeyAttribute());
      }
    }
    return Set.copyOf(out);
  }
}
