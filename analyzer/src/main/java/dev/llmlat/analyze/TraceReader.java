package dev.llmlat.analyze;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.store.ClickHouseStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** Reads spans from {@code otel_traces} into {@link SpanRecord}s. */
public final class TraceReader {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern TRACE_ID = Pattern.compile("[0-9a-f]{32}");
  private static final String COLUMNS =
      "TraceId, SpanId, ParentSpanId, SpanName, SpanKind, ServiceName, ResourceAttributes['llmlat.layer'],"
          + " ResourceAttributes['host.name'], toUnixTimestamp64Nano(Timestamp), Duration, toJSONString(SpanAttributes),"
          + " toJSONString(arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp)), toJSONString(Events.Name),"
          + " toJSONString(Events.Attributes), toJSONString(Links.TraceId), toJSONString(Links.SpanId)";

  private final ClickHouseStore store;

  public TraceReader(ClickHouseStore store) {
    this.store = store;
  }

  /** A trace id as the store writes it, or an exception naming the bad input. */
  public static String checkTraceId(String traceId) {
    String id = traceId.strip().toLowerCase(java.util.Locale.ROOT);
    if (!TRACE_ID.matcher(id).matches()) {
      throw new IllegalArgumentException("not a trace id (32 hex digits): '" + traceId + "'");
    }
    return id;
  }

  /**
   * Every span of the given traces, plus the step spans (engine and GPU) in [fromNs, toNs]. When
   * the window is given, trace spans are looked up in it too (they lie within it), which lets the
   * engine skip the parts of the table outside it.
   */
  public List<SpanRecord> read(Collection<String> traceIds, long fromNs, long toNs) {
    Map<String, SpanRecord> spans = new LinkedHashMap<>();
    List<String> ids = new ArrayList<>(traceIds);
    for (int i = 0; i < ids.size(); i += 5000) {
      StringBuilder in = new StringBuilder();
      for (String id : ids.subList(i, Math.min(ids.size(), i + 5000))) {
        in.append(in.length() == 0 ? "'" : ",'").append(checkTraceId(id)).append('\'');
      }
      select("TraceId IN (" + in + ")" + (fromNs <= toNs ? " AND Timestamp >= fromUnixTimestamp64Nano(" + fromNs
          + ") AND Timestamp <= fromUnixTimestamp64Nano(" + toNs + ")" : ""), spans);
    }
    if (fromNs <= toNs) {
      select("SpanName = 'step' AND Timestamp >= fromUnixTimestamp64Nano(" + fromNs + ") AND Timestamp <= fromUnixTimestamp64Nano("
          + toNs + ")", spans);
    }
    return new ArrayList<>(spans.values());
  }

  /** Spans matching a SQL condition built by this package (never from user text). */
  List<SpanRecord> where(String condition) {
    Map<String, SpanRecord> spans = new LinkedHashMap<>();
    select(condition, spans);
    return new ArrayList<>(spans.values());
  }

  private void select(String condition, Map<String, SpanRecord> into) {
    // decoding the attribute JSON is most of the work: spread it over the cores
    List<SpanRecord> spans = store.query("SELECT " + COLUMNS + " FROM otel_traces WHERE " + condition).rows()
        .parallelStream().map(TraceReader::parse).toList();
    for (SpanRecord span : spans) {
      into.putIfAbsent(span.traceId() + span.spanId(), span);
    }
  }

  private static SpanRecord parse(List<String> r) {
    try {
      long start = Long.parseLong(r.get(8));
      long duration = Long.parseLong(r.get(9));
      Map<String, String> attributes = stringMap(JSON.readTree(r.get(10)));
      JsonNode times = JSON.readTree(r.get(11));
      JsonNode names = JSON.readTree(r.get(12));
      JsonNode eventAttrs = JSON.readTree(r.get(13));
      List<SpanRecord.Event> events = new ArrayList<>(times.size());
      for (int i = 0; i < times.size(); i++) {
        events.add(new SpanRecord.Event(times.get(i).asLong(), names.get(i).asText(), stringMap(eventAttrs.get(i))));
      }
      JsonNode linkTraces = JSON.readTree(r.get(14));
      JsonNode linkSpans = JSON.readTree(r.get(15));
      List<SpanRecord.Link> links = new ArrayList<>(linkTraces.size());
      for (int i = 0; i < linkTraces.size(); i++) {
        links.add(new SpanRecord.Link(linkTraces.get(i).asText(), linkSpans.get(i).asText()));
      }
      return new SpanRecord(r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5), r.get(6), r.get(7),
          start, start + duration, attributes, events, links);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("unreadable span row " + r.get(0) + "/" + r.get(1) + ": " + e.getMessage(), e);
    }
  }

  private static Map<String, String> stringMap(JsonNode node) {
    Map<String, String> map = new HashMap<>();
    if (node != null) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        map.put(e.getKey(), e.getValue().asText());
      }
    }
    return map;
  }
}
