package dev.llmlat.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.stats.Wilson;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code llmlat report --by tenant|instance|model|service}: per group, requests, TTFT p50/p90/p99
 * (type-7 quantiles), the SLO violation rate with its Wilson 95% interval and the largest
 * component. By tenant, also the interference matrix: the share of each tenant's waiting (its queue
 * and batch interference) that each tenant's requests caused, from the prefills its requests queued
 * behind and the batches they shared ({@code TenantCause}). A row's shares need not reach 100%: the
 * rest is waiting no tenant's request explains (between steps, behind decode steps, requests
 * without a tenant). By instance, also the components of disaggregated requests per instance they
 * ran on ({@link InstanceParts}).
 */
public record GroupReport(
    Dimension dimension,
    long sloNs,
    List<Group> groups,
    Map<String, Map<String, Double>> matrix,
    InstanceParts instanceParts)
    implements Report {
  /**
   * What the requests are grouped by, and the {@code llm_request_attribution} column that says it.
   */
  public enum Dimension {
    TENANT("tenant", "Tenant"),
    INSTANCE("engine instance", "EngineInstance"),
    MODEL("model", "Model"),
    SERVICE("service", "ServiceName");

    private final String label;
    private final String column;

    Dimension(String label, String column) {
      this.label = label;
      this.column = column;
    }

    public String label() {
      return label;
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The label of requests no span names a tenant for. */
  public static final String NONE = "(none)";

  /** One group's figures. */
  public record Group(
      String name,
      long requests,
      double p50Ns,
      double p90Ns,
      double p99Ns,
      long violations,
      Wilson.Interval violationRate,
      String largest,
      long waitingNs) {}

  public GroupReport {
    groups = List.copyOf(groups);
  }

  public static GroupReport load(ClickHouseStore store, Dimension by, long fromNs, long sloNs) {
    String where =
        " FROM llm_request_attribution FINAL WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64})";
    Map<String, Object> params = Map.of("from_ns", fromNs, "slo_ns", sloNs);
    StringBuilder largest = new StringBuilder("arraySort(x -> -x.2, [");
    for (int i = 0; i < TtftComponent.all().size(); i++) {
      TtftComponent c = TtftComponent.all().get(i);
      largest
          .append(i == 0 ? "" : ", ")
          .append("('")
          .append(c.id())
          .append("', avg(")
          .append(c.column())
          .append("))");
    }
    largest.append("])[1].1");
    List<Group> groups = new ArrayList<>();
    for (List<String> r :
        store
            .query(
                "SELECT "
                    + by.column
                    + " AS g, count() AS n, quantilesExactInclusive(0.5, 0.9, 0.99)(TtftNs),"
                    + " countIf(TtftNs > {slo_ns:Int64}), "
                    + largest
                    + ", sum(QueueNs + BatchInterferenceNs)"
                    + where
                    + " GROUP BY g ORDER BY n DESC, g",
                params)
            .rows()) {
      long n = Long.parseLong(r.get(1));
      double[] q = parseArray(r.get(2));
      long over = Long.parseLong(r.get(3));
      groups.add(
          new Group(
              r.get(0).isEmpty() ? NONE : r.get(0),
              n,
              q[0],
              q[1],
              q[2],
              over,
              Wilson.of95(over, n),
              r.get(4),
              Long.parseLong(r.get(5))));
    }
    Map<String, Long> waiting = new LinkedHashMap<>();
    groups.forEach(t -> waiting.put(t.name(), t.waitingNs()));
    Map<String, Map<String, Double>> matrix = new LinkedHashMap<>();
    if (by != Dimension.TENANT) {
      return new GroupReport(
          by,
          sloNs,
          groups,
          matrix,
          by == Dimension.INSTANCE ? InstanceParts.load(store, fromNs) : InstanceParts.NONE);
    }
    groups.forEach(t -> matrix.put(t.name(), new LinkedHashMap<>()));
    for (List<String> r :
        store
            .query(
                "SELECT Tenant, cause, sum(ns) FROM llm_request_attribution FINAL"
                    + " ARRAY JOIN TenantCause AS cause, TenantCauseNs AS ns"
                    + where.substring(where.indexOf(" WHERE "))
                    + " GROUP BY Tenant, cause ORDER BY Tenant, cause",
                params)
            .rows()) {
      String victim = r.get(0).isEmpty() ? NONE : r.get(0);
      long total = waiting.getOrDefault(victim, 0L);
      if (total > 0) {
        matrix
            .computeIfAbsent(victim, k -> new LinkedHashMap<>())
            .put(r.get(1), Long.parseLong(r.get(2)) / (double) total);
      }
    }
    return new GroupReport(by, sloNs, groups, matrix, InstanceParts.NONE);
  }

  private static double[] parseArray(String text) {
    String inner = text.replaceAll("[\\[\\]]", "").trim();
    if (inner.isEmpty()) {
      return new double[] {0, 0, 0};
    }
    String[] parts = inner.split(",");
    double[] out = new double[parts.length];
    for (int i = 0; i < parts.length; i++) {
      out[i] = Double.parseDouble(parts[i].trim());
    }
    return out;
  }

  /** The groups that caused some waiting, in the order of the groups' table. */
  private List<String> causes() {
    List<String> out = new ArrayList<>();
    for (Group t : groups) {
      if (matrix.values().stream().anyMatch(row -> row.containsKey(t.name()))) {
        out.add(t.name());
      }
    }
    matrix
        .values()
        .forEach(row -> row.keySet().stream().filter(k -> !out.contains(k)).forEach(out::add));
    return out;
  }

  @Override
  public void printText(PrintWriter out) {
    out.printf("by %s (TTFT SLO %.1f ms):%n", dimension.label, sloNs / 1e6);
    out.printf(
        "  %-20s %8s %10s %10s %10s %8s %17s  %s%n",
        dimension.label,
        "requests",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "over SLO",
        "Wilson 95% CI",
        "largest component");
    for (Group t : groups) {
      out.printf(
          "  %-20s %8d %10.3f %10.3f %10.3f %7.1f%% %7.1f%%–%5.1f%%  %s%n",
          t.name(),
          t.requests(),
          t.p50Ns() / 1e6,
          t.p90Ns() / 1e6,
          t.p99Ns() / 1e6,
          100.0 * t.violations() / t.requests(),
          100 * t.violationRate().low(),
          100 * t.violationRate().high(),
          t.largest());
    }
    instanceParts.printText(out);
    if (dimension != Dimension.TENANT) {
      return;
    }
    List<String> causes = causes();
    if (causes.isEmpty()) {
      out.println(
          "  no tenant's requests made another's wait (no queue behind a tenant's prefill, no shared batches)");
      return;
    }
    out.println();
    out.println(
        "interference: share of each tenant's queue + batch interference caused by each tenant's requests");
    StringBuilder head = new StringBuilder(String.format("  %-20s", "waited \\ caused by"));
    causes.forEach(c -> head.append(String.format(" %12s", c)));
    out.println(head);
    for (Group t : groups) {
      StringBuilder row = new StringBuilder(String.format("  %-20s", t.name()));
      Map<String, Double> shares = matrix.getOrDefault(t.name(), Map.of());
      causes.forEach(
          c -> row.append(String.format(" %11.1f%%", 100 * shares.getOrDefault(c, 0.0))));
      out.println(row);
    }
  }

  @Override
  public String json() {
    ObjectNode root = JSON.createObjectNode();
    root.put("by", dimension.name().toLowerCase(java.util.Locale.ROOT));
    root.put("slo_ns", sloNs);
    ArrayNode list = root.putArray("groups");
    for (Group t : groups) {
      ObjectNode n = list.addObject();
      n.put("name", t.name());
      n.put("requests", t.requests());
      n.put("ttft_p50_ns", t.p50Ns());
      n.put("ttft_p90_ns", t.p90Ns());
      n.put("ttft_p99_ns", t.p99Ns());
      n.put("violations", t.violations());
      n.put("violation_rate", t.requests() == 0 ? 0 : t.violations() / (double) t.requests());
      n.put("violation_rate_low", t.violationRate().low());
      n.put("violation_rate_high", t.violationRate().high());
      n.put("largest_component", t.largest());
      n.put("waiting_ns", t.waitingNs());
    }
    if (dimension == Dimension.TENANT) {
      ObjectNode m = root.putObject("interference");
      matrix.forEach(
          (victim, row) -> {
            ObjectNode r = m.putObject(victim);
            row.forEach(r::put);
          });
    }
    if (dimension == Dimension.INSTANCE) {
      root.set("instance_parts", instanceParts.json());
    }
    return root.toPrettyString() + "\n";
  }

  /** One self-contained page: the groups' table and the matrix, shaded by share. */
  @Override
  public String html() {
    StringBuilder h =
        new StringBuilder(HtmlPage.head("llmlat report by " + dimension.label))
            .append("<h1>TTFT by ")
            .append(dimension.label)
            .append("</h1>");
    h.append("<table id=\"groups\"><tr><th>")
        .append(dimension.label)
        .append("</th><th>requests</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>")
        .append(
            String.format(
                "<th>over SLO %.1f ms</th><th>Wilson 95%% CI</th><th>largest component</th></tr>",
                sloNs / 1e6));
    for (Group t : groups) {
      h.append(
          String.format(
              "<tr><td>%s</td><td>%d</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.1f%%</td><td>%.1f–%.1f%%</td>"
                  + "<td>%s</td></tr>",
              HtmlPage.escape(t.name()),
              t.requests(),
              t.p50Ns() / 1e6,
              t.p90Ns() / 1e6,
              t.p99Ns() / 1e6,
              100.0 * t.violations() / t.requests(),
              100 * t.violationRate().low(),
              100 * t.violationRate().high(),
              t.largest()));
    }
    h.append("</table>").append(instanceParts.html());
    List<String> causes = causes();
    if (!causes.isEmpty()) {
      h.append(
              "<h2>Interference</h2><p>Share of each tenant's queue and batch interference caused by each tenant's requests.</p>")
          .append("<table id=\"interference\"><tr><th>waited \\ caused by</th>");
      causes.forEach(c -> h.append("<th>").append(HtmlPage.escape(c)).append("</th>"));
      h.append("</tr>");
      for (Group t : groups) {
        h.append("<tr><td>").append(HtmlPage.escape(t.name())).append("</td>");
        Map<String, Double> shares = matrix.getOrDefault(t.name(), Map.of());
        for (String c : causes) {
          double share = shares.getOrDefault(c, 0.0);
          h.append(
              String.format(
                  "<td style=\"background:rgba(228,87,86,%.2f)\">%.1f%%</td>",
                  Math.min(1, share), 100 * share));
        }
        h.append("</tr>");
      }
      h.append("</table>");
    }
    return h.append("</body></html>\n").toString();
  }
}
