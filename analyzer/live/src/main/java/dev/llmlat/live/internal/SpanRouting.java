package dev.llmlat.live.internal;

import dev.llmlat.analyze.otlp.OtlpSpanRecords;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.ingest.spans.OtlpRecordDecoder;
import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.streams.KeyValue;

/**
 * One span-topic record into routed spans: each trace's own spans to that trace, and every shared
 * span (the names {@link EngineAdapters#sharedSpanNames()} lists: engine steps, GPU steps, TGI
 * batches, which live in traces of their own or of the first request they served) to every request
 * trace it names in {@code llmlat.trace_ids} or links to, and to its own trace.
 */
public final class SpanRouting {
  private static final Set<String> SHARED = EngineAdapters.sharedSpanNames();
  private static final Pattern TRACE_ID = Pattern.compile("[0-9a-f]{32}");
  private static final String NO_TRACE = "0".repeat(32);

  private SpanRouting() {}

  /**
   * The routed spans of one record value, keyed by a trace they go to; empty for a value that is
   * not an OTLP span batch (the ingester dead-letters those; here they are counted and skipped).
   */
  public static List<KeyValue<String, RoutedSpans>> route(byte[] value, LiveMetrics metrics) {
    List<SpanRecord> spans;
    try {
      spans = OtlpSpanRecords.of(OtlpRecordDecoder.decode(value));
    } catch (OtlpRecordDecoder.InvalidRecordException e) {
      metrics.undecodable.incrementAndGet();
      return List.of();
    }
    metrics.records.incrementAndGet();
    metrics.spans.addAndGet(spans.size());
    List<KeyValue<String, RoutedSpans>> out = new ArrayList<>();
    Map<String, List<SpanRecord>> own = new LinkedHashMap<>();
    for (SpanRecord s : spans) {
      if (SHARED.contains(s.name())) {
        out.add(KeyValue.pair(s.traceId(), new RoutedSpans(served(s), List.of(s), true)));
      } else {
        own.computeIfAbsent(s.traceId(), k -> new ArrayList<>()).add(s);
      }
    }
    for (Map.Entry<String, List<SpanRecord>> e : own.entrySet()) {
      out.add(KeyValue.pair(e.getKey(), new RoutedSpans(List.of(e.getKey()), e.getValue(), false)));
    }
    return out;
  }

  /** The request traces a shared span serves (its own first), each once; malformed ids left out. */
  public static List<String> served(SpanRecord span) {
    Set<String> out = new LinkedHashSet<>();
    out.add(span.traceId());
    for (String t : span.arrayAttr(LlmlatAttributes.TRACE_IDS)) {
      add(out, t);
    }
    for (SpanRecord.Link l : span.links()) {
      add(out, l.traceId());
    }
    return List.copyOf(out);
  }

  private static void add(Set<String> out, String traceId) {
    String t = traceId.strip().toLowerCase(java.util.Locale.ROOT);
    if (TRACE_ID.matcher(t).matches() && !t.equals(NO_TRACE)) {
      out.add(t);
    }
  }
}
