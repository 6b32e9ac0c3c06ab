package dev.llmlat.report.diff;

import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.report.StallCauses;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryReader;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads one side's requests from {@code llm_request_attribution} (with FINAL: one row per request).
 */
public final class SampleLoader {
  /**
   * How far a request's spans may start from its arrival: bounds the span lookup by time, so the
   * engine skips the partitions of other days (a request's spans start within its own duration).
   */
  static final long SPAN_SLACK_NS = 3_600_000_000_000L;

  private SampleLoader() {}

  public static Sample load(ClickHouseStore store, Selection selection) {
    StringBuilder sql = new StringBuilder("SELECT TtftNs, ServerTtftNs");
    for (TtftComponent c : TtftComponent.all()) {
      sql.append(", ").append(c.column());
    }
    sql.append(", toInt64(ItlCount), ItlP50Ns, ItlP99Ns, toInt64(ItlStalls), ")
        .append(StallCauses.KIND_SQL);
    for (String kind : QueueBreakdown.KINDS) {
      sql.append(", toInt64(arraySum(arrayFilter((n, k) -> k = '")
          .append(kind)
          .append("', QueueCauseNs, QueueCauseKind)))");
    }
    sql.append(" FROM llm_request_attribution FINAL WHERE ").append(where(selection));
    Selection.AttributeMatch by = selection.attribute();
    if (by != null && by.rowCondition("value") != null) {
      sql.append(" AND ")
          .append(by.rowCondition("value"))
          .append(" AND NOT ")
          .append(by.rowCondition("other"));
    } else if (by != null) {
      sql.append(" AND TraceId IN (").append(matching(selection, "NOT")).append(')');
    }
    // RowBinary, not text: a side may be a day of traffic, and text would be a string per value
    RowBinaryReader in =
        new RowBinaryReader(store.queryRowBinary(sql.toString(), params(selection)));
    Sample.Builder sample = Sample.builder(selection.label());
    while (in.hasMore()) {
      long ttft = in.int64();
      long serverTtft = in.int64();
      long[] components = new long[TtftComponent.all().size()];
      for (int c = 0; c < components.length; c++) {
        components[c] = in.int64();
      }
      sample.add(
          ttft,
          serverTtft,
          components,
          (int) in.int64(),
          in.int64(),
          in.int64(),
          (int) in.int64(),
          in.repeatedString());
      long[] queue = new long[QueueBreakdown.KINDS.size()];
      for (int k = 0; k < queue.length; k++) {
        queue[k] = in.int64();
      }
      sample.queue(queue);
    }
    return sample.build();
  }

  /**
   * Requests of the selection's window and model that carry both its attribute value and the other
   * side's (on different spans): {@link #load} leaves them out of either side.
   */
  public static long ambiguous(ClickHouseStore store, Selection selection) {
    Selection.AttributeMatch by = selection.attribute();
    if (by == null) {
      return 0;
    }
    if (by.rowCondition("value") != null) {
      return Long.parseLong(
          store
              .query(
                  "SELECT count() FROM llm_request_attribution FINAL WHERE "
                      + where(selection)
                      + " AND "
                      + by.rowCondition("value")
                      + " AND "
                      + by.rowCondition("other"),
                  params(selection))
              .single());
    }
    return Long.parseLong(
        store
            .query("SELECT count() FROM (" + matching(selection, "") + ")", params(selection))
            .single());
  }

  private static String where(Selection s) {
    return "ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64}) AND ArrivalTime < fromUnixTimestamp64Nano({to_ns:Int64})"
        + (s.model().isEmpty() ? "" : " AND Model = {model:String}");
  }

  /**
   * Trace ids of the selection's requests whose spans carry the value, and ({@code other} "") or
   * not ({@code other} "NOT") the other side's. The attribute maps are read only for the spans of
   * those requests (PREWHERE on the trace ids, bounded by time).
   */
  private static String matching(Selection s, String other) {
    String is =
        "(ResourceAttributes[{key:String}] = {value:String} OR SpanAttributes[{key:String}] = {value:String})";
    String isOther =
        "(ResourceAttributes[{key:String}] = {other:String} OR SpanAttributes[{key:String}] = {other:String})";
    return "SELECT TraceId FROM otel_traces PREWHERE TraceId IN (SELECT TraceId FROM llm_request_attribution WHERE "
        + where(s)
        + ")"
        + " AND Timestamp >= fromUnixTimestamp64Nano({span_from_ns:Int64}) AND Timestamp < fromUnixTimestamp64Nano({span_to_ns:Int64})"
        + " WHERE "
        + is
        + " OR "
        + isOther
        + " GROUP BY TraceId HAVING max("
        + is
        + ") AND "
        + other
        + " max("
        + isOther
        + ")";
  }

  private static Map<String, Object> params(Selection s) {
    Map<String, Object> p = new HashMap<>();
    p.put("from_ns", s.fromNs());
    p.put("to_ns", s.toNs());
    p.put("span_from_ns", Math.max(0, s.fromNs() - SPAN_SLACK_NS));
    p.put("span_to_ns", Math.min(Selection.ALL_TO, s.toNs() + SPAN_SLACK_NS));
    if (!s.model().isEmpty()) {
      p.put("model", s.model());
    }
    if (s.attribute() != null) {
      p.put("key", s.attribute().key());
      p.put("value", s.attribute().value());
      p.put("other", s.attribute().otherValue());
    }
    return p;
  }
}
