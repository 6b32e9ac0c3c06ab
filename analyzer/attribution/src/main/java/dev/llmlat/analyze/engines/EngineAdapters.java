package dev.llmlat.analyze.engines;

import dev.llmlat.analyze.SpanRecord;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** The engine conventions the analyzer reads, asked in this order (the most specific first). */
public final class EngineAdapters {
  private static final List<EngineAdapter> ALL = List.of(new SchedulerSdkAdapter(), new TensorRtLlmAdapter(),
      new VllmAdapter(), new SglangAdapter(), new TgiAdapter());

  private EngineAdapters() {}

  public static List<EngineAdapter> all() {
    return ALL;
  }

  /** The adapter whose request {@code span} is, or null. */
  public static EngineAdapter forRequest(SpanRecord span) {
    for (EngineAdapter a : ALL) {
      if (a.isRequest(span)) {
        return a;
      }
    }
    return null;
  }

  /** What the named convention cannot show ("" for none or an unknown name). */
  public static String cannotShow(String adapterName) {
    if (UnknownEngine.NAME.equals(adapterName)) {
      return UnknownEngine.CANNOT_SHOW;
    }
    return ALL.stream().filter(a -> a.name().equals(adapterName)).map(EngineAdapter::cannotShow).findFirst().orElse("");
  }

  /** The SQL condition "is a request span of some convention" (the store is asked for these). */
  public static String requestWhere() {
    StringBuilder where = new StringBuilder("(");
    for (EngineAdapter a : ALL) {
      where.append(where.length() == 1 ? "(" : " OR (").append(a.requestWhere()).append(')');
    }
    return where.append(')').toString();
  }

  /** The adapters' {@link EngineAdapter#requestNameWhere} joined: a cheap first filter for requests. */
  public static String requestNameWhere() {
    return ALL.stream().map(EngineAdapter::requestNameWhere).distinct().map(w -> "(" + w + ")")
        .collect(java.util.stream.Collectors.joining(" OR ", "(", ")"));
  }

  /** The adapters' names, for messages. */
  public static String names() {
    return String.join(", ", ALL.stream().map(EngineAdapter::name).toList());
  }

  /** Every shared span name (steps, batches), sorted. */
  public static Set<String> sharedSpanNames() {
    Set<String> names = new TreeSet<>();
    ALL.forEach(a -> names.addAll(a.sharedSpanNames()));
    return names;
  }
}
