package dev.llmlat.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.analyze.Attribution;
import dev.llmlat.stats.Wilson;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code llmlat report --by tenant}: per tenant, requests, TTFT p50/p90/p99 (type-7 quantiles), the SLO violation
 * rate with its Wilson 95% interval and the largest component; and the interference matrix: the share of each
 * tenant's waiting (its queue and batch interference) that each tenant's requests caused, from the prefills its
 * requests queued behind and the batches they shared ({@code TenantCause}). A row's shares need not reach 100%:
 * the rest is waiting no tenant's request explains (between steps, behind decode steps, requests without a tenant).
 */
public record TenantReport(long sloNs, List<Tenant> tenants, Map<String, Map<String, Double>> matrix) implements Report {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** The label of requests no span names a tenant for. */
  public static final String NONE = "(none)";

  /** One tenant's figures. */
  public record Tenant(String name, long requests, double p50Ns, double p90Ns, double p99Ns, long violations,
      Wilson.Interval violationRate, String largest, long waitingNs) {}

  public TenantReport {
    tenants = List.copyOf(tenants);
  }

  public static TenantReport load(ClickHouseStore store, long fromNs, long sloNs) {
    String where = " FROM llm_request_attribution FINAL WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64})";
    Map<String, Object> params = Map.of("from_ns", fromNs, "slo_ns", sloNs);
    StringBuilder largest = new StringBuilder("arraySort(x -> -x.2, [");
    for (int i = 0; i < Attribution.COMPONENTS.size(); i++) {
      String c = Attribution.COMPONENTS.get(i);
      largest.append(i == 0 ? "" : ", ").append("('").append(c).append("', avg(").append(Attribution.column(c)).append("))");
    }
    largest.append("])[1].1");
    List<Tenant> tenants = new ArrayList<>();
    for (List<String> r : store.query("SELECT Tenant, count() AS n, quantilesExactInclusive(0.5, 0.9, 0.99)(TtftNs),"
        + " countIf(TtftNs > {slo_ns:Int64}), " + largest + ", sum(QueueNs + BatchInterferenceNs)" + where
        + " GROUP BY Tenant ORDER BY n DESC, Tenant", params).rows()) {
      long n = Long.parseLong(r.get(1));
      double[] q = parseArray(r.get(2));
      long over = Long.parseLong(r.get(3));
      tenants.add(new Tenant(r.get(0).isEmpty() ? NONE : r.get(0), n, q[0], q[1], q[2], over, Wilson.of95(over, n), r.get(4),
          Long.parseLong(r.get(5))));
    }
    Map<String, Long> waiting = new LinkedHashMap<>();
    tenants.forEach(t -> waiting.put(t.name(), t.waitingNs()));
    Map<String, Map<String, Double>> matrix = new LinkedHashMap<>();
    tenants.forEach(t -> matrix.put(t.name(), new LinkedHashMap<>()));
    for (List<String> r : store.query("SELECT Tenant, cause, sum(ns) FROM llm_request_attribution FINAL"
        + " ARRAY JOIN TenantCause AS cause, TenantCauseNs AS ns" + where.substring(where.indexOf(" WHERE "))
        + " GROUP BY Tenant, cause ORDER BY Tenant, cause", params).rows()) {
      String victim = r.get(0).isEmpty() ? NONE : r.get(0);
      long total = waiting.getOrDefault(victim, 0L);
      if (total > 0) {
        matrix.computeIfAbsent(victim, k -> new LinkedHashMap<>()).put(r.get(1), Long.parseLong(r.get(2)) / (double) total);
      }
    }
    return new TenantReport(sloNs, tenants, matrix);
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

  /** The tenants that caused some waiting, in the order of the tenants' table. */
  private List<String> causes() {
    List<String> out = new ArrayList<>();
    for (Tenant t : tenants) {
      if (matrix.values().stream().anyMatch(row -> row.containsKey(t.name()))) {
        out.add(t.name());
      }
    }
    matrix.values().forEach(row -> row.keySet().stream().filter(k -> !out.contains(k)).forEach(out::add));
    return out;
  }

  @Override
  public void printText(PrintWriter out) {
    out.printf("tenants (TTFT SLO %.1f ms):%n", sloNs / 1e6);
    out.printf("  %-20s %8s %10s %10s %10s %8s %17s  %s%n", "tenant", "requests", "p50 ms", "p90 ms", "p99 ms", "over SLO",
        "Wilson 95% CI", "largest component");
    for (Tenant t : tenants) {
      out.printf("  %-20s %8d %10.3f %10.3f %10.3f %7.1f%% %7.1f%%–%5.1f%%  %s%n", t.name(), t.requests(), t.p50Ns() / 1e6,
          t.p90Ns() / 1e6, t.p99Ns() / 1e6, 100.0 * t.violations() / t.requests(), 100 * t.violationRate().low(),
          100 * t.violationRate().high(), t.largest());
    }
    List<String> causes = causes();
    if (causes.isEmpty()) {
      out.println("  no tenant's requests made another's wait (no queue behind a tenant's prefill, no shared batches)");
      return;
    }
    out.println();
    out.println("interference: share of each tenant's queue + batch interference caused by each tenant's requests");
    StringBuilder head = new StringBuilder(String.format("  %-20s", "waited \\ caused by"));
    causes.forEach(c -> head.append(String.format(" %12s", c)));
    out.println(head);
    for (Tenant t : tenants) {
      StringBuilder row = new StringBuilder(String.format("  %-20s", t.name()));
      Map<String, Double> shares = matrix.getOrDefault(t.name(), Map.of());
      causes.forEach(c -> row.append(String.format(" %11.1f%%", 100 * shares.getOrDefault(c, 0.0))));
      out.println(row);
    }
  }

  @Override
  public String json() {
    ObjectNode root = JSON.createObjectNode();
    root.put("slo_ns", sloNs);
    ArrayNode list = root.putArray("tenants");
    for (Tenant t : tenants) {
      ObjectNode n = list.addObject();
      n.put("tenant", t.name());
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
    ObjectNode m = root.putObject("interference");
    matrix.forEach((victim, row) -> {
      ObjectNode r = m.putObject(victim);
      row.forEach(r::put);
    });
    return root.toPrettyString() + "\n";
  }

  /** One self-contained page: the tenants' table and the matrix, shaded by share. */
  @Override
  public String html() {
    StringBuilder h = new StringBuilder(HtmlPage.head("llmlat report by tenant")).append("<h1>TTFT by tenant</h1>");
    h.append("<table id=\"tenants\"><tr><th>tenant</th><th>requests</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>")
        .append(String.format("<th>over SLO %.1f ms</th><th>Wilson 95%% CI</th><th>largest component</th></tr>", sloNs / 1e6));
    for (Tenant t : tenants) {
      h.append(String.format("<tr><td>%s</td><td>%d</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.1f%%</td><td>%.1f–%.1f%%</td>"
          + "<td>%s</td></tr>", HtmlPage.escape(t.name()), t.requests(), t.p50Ns() / 1e6, t.p90Ns() / 1e6, t.p99Ns() / 1e6,
          100.0 * t.violations() / t.requests(), 100 * t.violationRate().low(), 100 * t.violationRate().high(), t.largest()));
    }
    h.append("</table>");
    List<String> causes = causes();
    if (!causes.isEmpty()) {
      h.append("<h2>Interference</h2><p>Share of each tenant's queue and batch interference caused by each tenant's requests.</p>")
          .append("<table id=\"interference\"><tr><th>waited \\ caused by</th>");
      causes.forEach(c -> h.append("<th>").append(HtmlPage.escape(c)).append("</th>"));
      h.append("</tr>");
      for (Tenant t : tenants) {
        h.append("<tr><td>").append(HtmlPage.escape(t.name())).append("</td>");
        Map<String, Double> shares = matrix.getOrDefault(t.name(), Map.of());
        for (String c : causes) {
          double share = shares.getOrDefault(c, 0.0);
          h.append(String.format("<td style=\"background:rgba(228,87,86,%.2f)\">%.1f%%</td>", Math.min(1, share), 100 * share));
        }
        h.append("</tr>");
      }
      h.append("</table>");
    }
    return h.append("</body></html>\n").toString();
  }
}
