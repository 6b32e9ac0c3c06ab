package dev.llmlat.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.attribution.QueueBreakdown;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The queue causes of {@code llm_request_attribution}, ranked: how much of all queue time each kind
 * of cause took (behind prefill, behind decode, between steps, preempted, no steps shown), the
 * requests that blocked others longest, and the scheduler limits that kept requests waiting.
 *
 * @param queueNs all queue time of the requests with a breakdown
 */
public record QueueCauses(
    long requests, long queueNs, List<Cause> kinds, List<Cause> blockers, List<Cause> limits) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One ranked cause: its name, its queue time, and the requests it kept waiting. */
  public record Cause(String name, long ns, long requests) {}

  public QueueCauses {
    kinds = List.copyOf(kinds);
    blockers = List.copyOf(blockers);
    limits = List.copyOf(limits);
  }

  /** The requests that arrived from {@code fromNs} on, as {@link AttributionReport} reads them. */
  public static QueueCauses load(ClickHouseStore store, long fromNs) {
    String where =
        " FROM llm_request_attribution FINAL WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64})"
            + " AND length(QueueCauseKind) > 0";
    Map<String, Object> params = Map.of("from_ns", fromNs);
    List<String> total = store.query("SELECT count(), sum(QueueNs)" + where, params).rows().get(0);
    List<Cause> kinds =
        causes(
            store,
            "SELECT k, sum(n) AS ns, uniqExact(TraceId)"
                + joined(where)
                + " GROUP BY k ORDER BY ns DESC",
            params);
    List<Cause> blockers =
        causes(
            store,
            "SELECT t, sum(n) AS ns, uniqExact(TraceId)"
                + joined(where)
                + " AND k = '"
                + QueueBreakdown.PREFILL
                + "' GROUP BY t ORDER BY ns DESC LIMIT 5",
            params);
    List<Cause> limits =
        causes(
            store,
            "SELECT QueueLimit, sum(QueueNs) AS ns, count()"
                + where
                + " AND QueueLimit != '' GROUP BY QueueLimit ORDER BY ns DESC LIMIT 5",
            params);
    return new QueueCauses(
        Long.parseLong(total.get(0)), Long.parseLong(total.get(1)), kinds, blockers, limits);
  }

  /** The rows' parts, one row each: ARRAY JOIN over the parallel arrays. */
  private static String joined(String where) {
    return " FROM llm_request_attribution FINAL ARRAY JOIN QueueCauseKind AS k, QueueCauseNs AS n, QueueCauseTraceId AS t"
        + where.substring(where.indexOf(" WHERE "));
  }

  private static List<Cause> causes(ClickHouseStore store, String sql, Map<String, Object> params) {
    List<Cause> out = new ArrayList<>();
    for (List<String> r : store.query(sql, params).rows()) {
      out.add(new Cause(r.get(0), Long.parseLong(r.get(1)), Long.parseLong(r.get(2))));
    }
    return out;
  }

  private double share(long ns) {
    return queueNs == 0 ? 0 : 100.0 * ns / queueNs;
  }

  public void printText(PrintWriter out) {
    if (requests == 0) {
      return;
    }
    out.printf("queue causes (%d requests, %.3f ms queued in all):%n", requests, queueNs / 1e6);
    for (Cause c : kinds) {
      out.printf(
          "  %-19s %12.3f ms %6.1f%%  %5d requests%n",
          c.name(), c.ns() / 1e6, share(c.ns()), c.requests());
    }
    if (!blockers.isEmpty()) {
      out.println("  requests others queued behind longest (their prefill):");
      blockers.forEach(
          c ->
              out.printf(
                  "    %s %10.3f ms %6.1f%%  blocked %d requests%n",
                  c.name(), c.ns() / 1e6, share(c.ns()), c.requests()));
    }
    if (!limits.isEmpty()) {
      out.println("  scheduler limits that kept requests waiting:");
      limits.forEach(
          c ->
              out.printf(
                  "    %-32s %5d requests, %10.3f ms queued%n",
                  c.name(), c.requests(), c.ns() / 1e6));
    }
    out.println();
  }

  public ObjectNode json() {
    ObjectNode o = JSON.createObjectNode();
    o.put("requests", requests);
    o.put("queue_ns", queueNs);
    array(o.putArray("kinds"), kinds, "kind");
    array(o.putArray("blockers"), blockers, "trace_id");
    array(o.putArray("limits"), limits, "limit");
    return o;
  }

  private void array(ArrayNode a, List<Cause> causes, String key) {
    for (Cause c : causes) {
      ObjectNode n = a.addObject();
      n.put(key, c.name());
      n.put("ns", c.ns());
      n.put("share", queueNs == 0 ? 0 : c.ns() / (double) queueNs);
      n.put("requests", c.requests());
    }
  }

  /** The section as HTML, or "" without breakdowns. */
  public String html() {
    if (requests == 0) {
      return "";
    }
    StringBuilder h =
        new StringBuilder(
            "<h2>Queue causes</h2><table id=\"queue-causes\"><tr><th>cause</th><th>ms</th><th>share</th>"
                + "<th>requests</th></tr>");
    for (Cause c : kinds) {
      h.append(
          String.format(
              "<tr><td>%s</td><td>%.3f</td><td>%.1f%%</td><td>%d</td></tr>",
              HtmlPage.escape(c.name()), c.ns() / 1e6, share(c.ns()), c.requests()));
    }
    for (Cause c : blockers) {
      h.append(
          String.format(
              "<tr><td>behind prefill of %s</td><td>%.3f</td><td>%.1f%%</td><td>%d</td></tr>",
              HtmlPage.escape(c.name()), c.ns() / 1e6, share(c.ns()), c.requests()));
    }
    for (Cause c : limits) {
      h.append(
          String.format(
              "<tr><td>limit: %s</td><td>%.3f</td><td></td><td>%d</td></tr>",
              HtmlPage.escape(c.name()), c.ns() / 1e6, c.requests()));
    }
    return h.append("</table>").toString();
  }
}
