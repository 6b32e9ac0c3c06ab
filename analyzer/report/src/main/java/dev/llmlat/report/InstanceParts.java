package dev.llmlat.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The components of disaggregated requests per instance and role (prefill, decode, transfer), from
 * the rows' {@code Part*} arrays: where a prefill/decode fleet spends its requests' TTFT.
 */
public record InstanceParts(List<Part> parts) {
  private static final ObjectMapper JSON = new ObjectMapper();
  public static final InstanceParts NONE = new InstanceParts(List.of());

  /** One component on one instance: its time in all, the requests it was part of. */
  public record Part(String instance, String role, String component, long ns, long requests) {}

  public InstanceParts {
    parts = List.copyOf(parts);
  }

  public static InstanceParts load(ClickHouseStore store, long fromNs) {
    List<Part> parts = new ArrayList<>();
    for (List<String> r :
        store
            .query(
                "SELECT i, r, c, sum(n) AS ns, uniqExact(TraceId) FROM llm_request_attribution FINAL"
                    + " ARRAY JOIN PartInstance AS i, PartRole AS r, PartComponent AS c, PartNs AS n"
                    + " WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64}) GROUP BY i, r, c ORDER BY r, i, ns DESC",
                Map.of("from_ns", fromNs))
            .rows()) {
      parts.add(
          new Part(
              r.get(0), r.get(1), r.get(2), Long.parseLong(r.get(3)), Long.parseLong(r.get(4))));
    }
    return new InstanceParts(parts);
  }

  public void printText(PrintWriter out) {
    if (parts.isEmpty()) {
      return;
    }
    out.println();
    out.println("disaggregated requests, components per instance:");
    for (Part p : parts) {
      out.printf(
          "  %-8s %-28s %-19s %12.3f ms  %5d requests (mean %.3f ms)%n",
          p.role(),
          p.instance(),
          p.component(),
          p.ns() / 1e6,
          p.requests(),
          p.ns() / 1e6 / p.requests());
    }
  }

  public ArrayNode json() {
    ArrayNode a = JSON.createArrayNode();
    parts.forEach(
        p ->
            a.addObject()
                .put("instance", p.instance())
                .put("role", p.role())
                .put("component", p.component())
                .put("ns", p.ns())
                .put("requests", p.requests()));
    return a;
  }

  public String html() {
    if (parts.isEmpty()) {
      return "";
    }
    StringBuilder h =
        new StringBuilder(
            "<h2>Disaggregated requests per instance</h2><table id=\"instance-parts\"><tr><th>role</th>"
                + "<th>instance</th><th>component</th><th>ms</th><th>requests</th></tr>");
    parts.forEach(
        p ->
            h.append(
                String.format(
                    "<tr><td>%s</td><td>%s</td><td>%s</td><td>%.3f</td><td>%d</td></tr>",
                    HtmlPage.escape(p.role()),
                    HtmlPage.escape(p.instance()),
                    p.component(),
                    p.ns() / 1e6,
                    p.requests())));
    return h.append("</table>").toString();
  }
}
