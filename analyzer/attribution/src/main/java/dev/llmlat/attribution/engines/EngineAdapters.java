package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The engine conventions the analyzer reads. A span that names its engine (scope, span names) is
 * only that engine's request; otherwise the adapters are asked in this order (the most specific
 * first). The SQL filter and the Java check both come from {@link #requestCondition}.
 */
public final class EngineAdapters {
  private static final List<EngineAdapter> ALL =
      List.of(
          new SchedulerSdkAdapter(),
          new TensorRtLlmAdapter(),
          new VllmAdapter(),
          new SglangAdapter(),
          new TgiAdapter());

  /** Each adapter's request condition, with the spans other engines name taken out. */
  private static final Map<EngineAdapter, SpanCondition> REQUESTS = conditions();

  private EngineAdapters() {}

  public static List<EngineAdapter> all() {
    return ALL;
  }

  /**
   * When {@code adapter} reads a span: its rule holds, and the span names this engine or no other
   * (a vLLM span on a resource labelled {@code llmlat.layer=engine} is still vLLM's).
   */
  public static SpanCondition requestCondition(EngineAdapter adapter) {
    SpanCondition c = REQUESTS.get(adapter);
    if (c == null) {
      throw new IllegalArgumentException("not one of the analyzer's adapters: " + adapter.name());
    }
    return c;
  }

  private static Map<EngineAdapter, SpanCondition> conditions() {
    Map<EngineAdapter, SpanCondition> out = new LinkedHashMap<>();
    for (EngineAdapter a : ALL) {
      List<SpanCondition> others = new ArrayList<>();
      for (EngineAdapter o : ALL) {
        if (o != a) {
          others.add(o.requestRule().engine());
        }
      }
      RequestRule rule = a.requestRule();
      out.put(
          a,
          SpanCondition.allOf(
              rule.request(),
              SpanCondition.anyOf(rule.engine(), SpanCondition.not(SpanCondition.anyOf(others)))));
    }
    return out;
  }

  /** The adapter whose request {@code span} is, or null. */
  public static EngineAdapter forRequest(SpanRecord span) {
    for (Map.Entry<EngineAdapter, SpanCondition> e : REQUESTS.entrySet()) {
      if (e.getValue().test(span)) {
        return e.getKey();
      }
    }
    return null;
  }

  /** What the named convention cannot show ("" for none or an unknown name). */
  public static String cannotShow(String adapterName) {
    if (UnknownEngine.NAME.equals(adapterName)) {
      return UnknownEngine.CANNOT_SHOW;
    }
    return ALL.stream()
        .filter(a -> a.name().equals(adapterName))
        .map(EngineAdapter::cannotShow)
        .findFirst()
        .orElse("");
  }

  /** The SQL condition "is a request span of some convention" (the store is asked for these). */
  public static String requestWhere() {
    return "(" + SpanCondition.anyOf(List.copyOf(REQUESTS.values())).sql() + ")";
  }

  /** The adapters' request span names as SQL: a cheap first filter for requests. */
  public static String requestNameWhere() {
    return ALL.stream()
        .map(a -> a.requestRule().names().sql())
        .distinct()
        .map(w -> "(" + w + ")")
        .collect(Collectors.joining(" OR ", "(", ")"));
  }

  /** The adapters' names, for messages. */
  public static String names() {
    return String.join(", ", ALL.stream().map(EngineAdapter::name).toList());
  }

  /** Every shared span name (steps, batches), sorted. */
  public static Set<String> sharedSpanNames() {
    Set<String> names = new TreeSet<>();
    ALL.forEach(a -> names.addAll(a.requestRule().sharedSpanNames()));
    return names;
  }
}
