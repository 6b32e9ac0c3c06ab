package dev.llmlat.report;

import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.stats.Wilson;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Aggregates of {@code llm_request_attribution}: quantiles of TTFT and of each component, the SLO
 * violation rate with its Wilson 95% interval, the dominant components and the named stalls, the
 * slowest requests. Renders as text or as one self-contained HTML page.
 */
public final class AttributionReport implements Report {
  static final String[] COLUMNS =
      TtftComponent.all().stream().map(TtftComponent::column).toArray(String[]::new);

  /** p50/p90/p99 and mean of one quantity, in ns. */
  public record Quantiles(String name, double p50, double p90, double p99, double mean) {}

  /** One of the slowest requests and its components. */
  public record Slow(String traceId, String model, long ttftNs, Map<String, Long> components) {}

  private final long requests;
  private final long sloNs;
  private final long violations;
  private final Quantiles ttft;
  private final List<Quantiles> components;
  private final Map<String, Long> dominant;
  private final Map<String, Long> stalls;
  private final List<Slow> slowest;
  private final long[] histogram;
  private final double histogramBucketNs;
  private final Map<String, Long> engines;
  private final ClientServerGap clientServer;
  private final QueueCauses queueCauses;
  private final GatewayCauses gatewayCauses;

  private AttributionReport(
      long requests,
      long sloNs,
      long violations,
      Quantiles ttft,
      List<Quantiles> components,
      Map<String, Long> dominant,
      Map<String, Long> stalls,
      List<Slow> slowest,
      long[] histogram,
      double bucketNs,
      Map<String, Long> engines,
      ClientServerGap clientServer,
      QueueCauses queueCauses,
      GatewayCauses gatewayCauses) {
    this.queueCauses = queueCauses;
    this.gatewayCauses = gatewayCauses;
    this.engines = engines;
    this.clientServer = clientServer;
    this.requests = requests;
    this.sloNs = sloNs;
    this.violations = violations;
    this.ttft = ttft;
    this.components = components;
    this.dominant = dominant;
    this.stalls = stalls;
    this.slowest = slowest;
    this.histogram = histogram;
    this.histogramBucketNs = bucketNs;
  }

  public static AttributionReport load(ClickHouseStore store, long fromNs, long sloNs) {
    String where =
        " FROM llm_request_attribution FINAL WHERE ArrivalTime >= fromUnixTimestamp64Nano({from_ns:Int64})";
    Map<String, Object> params = Map.of("from_ns", fromNs, "slo_ns", sloNs);
    StringBuilder sql =
        new StringBuilder(
            "SELECT count(), countIf(TtftNs > {slo_ns:Int64}), quantilesExact(0.5, 0.9, 0.99)(TtftNs), avg(TtftNs)");
    for (String c : COLUMNS) {
      sql.append(", quantilesExact(0.5, 0.9, 0.99)(")
          .append(c)
          .append("), avg(")
          .append(c)
          .append(')');
    }
    List<String> row = store.query(sql + where, params).rows().get(0);
    long n = Long.parseLong(row.get(0));
    List<Quantiles> components = new ArrayList<>();
    for (int i = 0; i < COLUMNS.length; i++) {
      components.add(
          quantiles(TtftComponent.all().get(i).id(), row.get(4 + 2 * i), row.get(5 + 2 * i)));
    }
    Map<String, Long> dominant = new LinkedHashMap<>();
    StringBuilder argmax = new StringBuilder("multiIf(");
    for (int i = 0; i < COLUMNS.length; i++) {
      StringBuilder greatest = new StringBuilder();
      for (String other : COLUMNS) {
        greatest.append(greatest.length() == 0 ? "" : ", ").append(other);
      }
      argmax
          .append(COLUMNS[i])
          .append(" = greatest(")
          .append(greatest)
          .append("), '")
          .append(TtftComponent.all().get(i).id())
          .append("', ");
    }
    argmax.append("'none')");
    for (List<String> r :
        store
            .query(
                "SELECT " + argmax + " AS c, count() AS n" + where + " GROUP BY c ORDER BY n DESC",
                params)
            .rows()) {
      dominant.put(r.get(0), Long.parseLong(r.get(1)));
    }
    Map<String, Long> stalls = new LinkedHashMap<>();
    for (List<String> r :
        store
            .query(
                "SELECT "
                    + StallCauses.KIND_SQL
                    + " AS c, count() AS n"
                    + where
                    + " AND TopStallCause != '' GROUP BY c ORDER BY n DESC LIMIT 8",
                params)
            .rows()) {
      stalls.put(r.get(0), Long.parseLong(r.get(1)));
    }
    List<Slow> slowest = new ArrayList<>();
    StringBuilder cols = new StringBuilder();
    for (String c : COLUMNS) {
      cols.append(", ").append(c);
    }
    for (List<String> r :
        store
            .query(
                "SELECT TraceId, Model, TtftNs" + cols + where + " ORDER BY TtftNs DESC LIMIT 10",
                params)
            .rows()) {
      Map<String, Long> parts = new LinkedHashMap<>();
      for (int i = 0; i < COLUMNS.length; i++) {
        parts.put(TtftComponent.all().get(i).id(), Long.parseLong(r.get(3 + i)));
      }
      slowest.add(new Slow(r.get(0), r.get(1), Long.parseLong(r.get(2)), parts));
    }
    long[] histogram = new long[24];
    double bucket = 1;
    if (n > 0) {
      long max = Long.parseLong(store.query("SELECT max(TtftNs)" + where, params).single());
      bucket = Math.max(1, max / (double) histogram.length);
      for (List<String> r :
          store
              .query(
                  "SELECT least("
                      + (histogram.length - 1)
                      + ", toUInt32(floor(TtftNs / "
                      + bucket
                      + "))) AS b, count()"
                      + where
                      + " GROUP BY b",
                  params)
              .rows()) {
        histogram[Integer.parseInt(r.get(0))] = Long.parseLong(r.get(1));
      }
    }
    Map<String, Long> engines = new LinkedHashMap<>();
    for (List<String> r :
        store
            .query(
                "SELECT EngineAdapter AS a, count() AS n" + where + " GROUP BY a ORDER BY n DESC",
                params)
            .rows()) {
      engines.put(r.get(0), Long.parseLong(r.get(1)));
    }
    return new AttributionReport(
        n,
        sloNs,
        Long.parseLong(row.get(1)),
        quantiles("ttft", row.get(2), row.get(3)),
        components,
        dominant,
        stalls,
        slowest,
        histogram,
        bucket,
        engines,
        ClientServerGap.load(store, fromNs),
        QueueCauses.load(store, fromNs),
        GatewayCauses.load(store, fromNs));
  }

  private static Quantiles quantiles(String name, String array, String mean) {
    String[] q = array.replace("[", "").replace("]", "").split(",");
    double m = mean.equals("nan") ? 0 : Double.parseDouble(mean);
    if (q.length < 3) {
      return new Quantiles(name, 0, 0, 0, m);
    }
    return new Quantiles(
        name, Double.parseDouble(q[0]), Double.parseDouble(q[1]), Double.parseDouble(q[2]), m);
  }

  public long requests() {
    return requests;
  }

  public long violations() {
    return violations;
  }

  public Quantiles ttft() {
    return ttft;
  }

  public List<Quantiles> components() {
    return components;
  }

  public Map<String, Long> dominant() {
    return dominant;
  }

  public Map<String, Long> stalls() {
    return stalls;
  }

  public List<Slow> slowest() {
    return slowest;
  }

  /** Where requests through a gateway lost time on the way in and out, ranked. */
  public GatewayCauses gatewayCauses() {
    return gatewayCauses;
  }

  /** What the requests queued behind, ranked. */
  public QueueCauses queueCauses() {
    return queueCauses;
  }

  /**
   * The report's figures as JSON: TTFT and component quantiles, the largest components, the ranked
   * queue causes.
   */
  @Override
  public String json() {
    com.fasterxml.jackson.databind.ObjectMapper m =
        new com.fasterxml.jackson.databind.ObjectMapper();
    com.fasterxml.jackson.databind.node.ObjectNode root = m.createObjectNode();
    root.put("requests", requests);
    root.put("slo_ns", sloNs);
    root.put("violations", violations);
    com.fasterxml.jackson.databind.node.ArrayNode q = root.putArray("quantiles");
    java.util.stream.Stream.concat(java.util.stream.Stream.of(ttft), components.stream())
        .forEach(
            x ->
                q.addObject()
                    .put("name", x.name())
                    .put("p50_ns", x.p50())
                    .put("p90_ns", x.p90())
                    .put("p99_ns", x.p99())
                    .put("mean_ns", x.mean()));
    com.fasterxml.jackson.databind.node.ObjectNode d = root.putObject("largest_component");
    dominant.forEach(d::put);
    root.set("queue_causes", queueCauses.json());
    root.set("gateway_causes", gatewayCauses.json());
    return root.toPrettyString() + "\n";
  }

  /** Requests per engine convention the analyzer read them with. */
  public Map<String, Long> engines() {
    return engines;
  }

  @Override
  public void printText(PrintWriter out) {
    out.printf("requests: %d%n", requests);
    if (requests == 0) {
      out.println("nothing attributed yet: run `llmlat analyze`");
      return;
    }
    Wilson.Interval ci = Wilson.of95(violations, requests);
    out.printf(
        "TTFT SLO %.1f ms: %d of %d requests over (%.1f%%, Wilson 95%% CI %.1f%%–%.1f%%)%n%n",
        sloNs / 1e6,
        violations,
        requests,
        100.0 * violations / requests,
        100 * ci.low(),
        100 * ci.high());
    out.printf(
        "%-19s %10s %10s %10s %10s %7s%n", "component (ms)", "p50", "p90", "p99", "mean", "share");
    out.printf(
        "%-19s %10.3f %10.3f %10.3f %10.3f %7s%n",
        "TTFT", ttft.p50() / 1e6, ttft.p90() / 1e6, ttft.p99() / 1e6, ttft.mean() / 1e6, "100%");
    for (Quantiles q : components) {
      out.printf(
          "%-19s %10.3f %10.3f %10.3f %10.3f %6.1f%%%n",
          q.name(),
          q.p50() / 1e6,
          q.p90() / 1e6,
          q.p99() / 1e6,
          q.mean() / 1e6,
          ttft.mean() == 0 ? 0 : 100 * q.mean() / ttft.mean());
    }
    out.println();
    clientServer.printText(out);
    out.println("engine layer read as:");
    engines.forEach(
        (k, v) ->
            out.printf(
                "  %-24s %6d requests%s%n",
                k.isEmpty() ? "(not recorded)" : k,
                v,
                EngineAdapters.cannotShow(k).isEmpty()
                    ? ""
                    : "   cannot show: " + EngineAdapters.cannotShow(k)));
    out.println("largest component per request:");
    dominant.forEach((k, v) -> out.printf("  %-19s %6d requests%n", k, v));
    queueCauses.printText(out);
    gatewayCauses.printText(out);
    if (!stalls.isEmpty()) {
      out.println("top inter-token stall causes:");
      stalls.forEach((k, v) -> out.printf("  %-50s %6d requests%n", k, v));
    }
    out.println("slowest requests:");
    for (Slow s : slowest.subList(0, Math.min(5, slowest.size()))) {
      Map.Entry<String, Long> top =
          s.components().entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow();
      out.printf(
          "  %s  %10.3f ms  mostly %s (%.3f ms)   llmlat explain %s%n",
          s.traceId(), s.ttftNs() / 1e6, top.getKey(), top.getValue() / 1e6, s.traceId());
    }
  }

  /** One self-contained page: inline CSS and SVG, no scripts or external assets. */
  @Override
  public String html() {
    StringBuilder h = new StringBuilder();
    h.append(HtmlPage.head("llmlat TTFT report")).append("<h1>Where the TTFT went</h1>");
    Wilson.Interval ci =
        requests == 0 ? new Wilson.Interval(0, 0, 0) : Wilson.of95(violations, requests);
    h.append(
        String.format(
            "<p id=\"summary\">%d requests; TTFT p50 %.1f ms, p99 %.1f ms; SLO %.1f ms violated by %d (%.1f%%, Wilson 95%% CI %.1f–%.1f%%)</p>",
            requests,
            ttft.p50() / 1e6,
            ttft.p99() / 1e6,
            sloNs / 1e6,
            violations,
            requests == 0 ? 0 : 100.0 * violations / requests,
            100 * ci.low(),
            100 * ci.high()));
    h.append(
        "<h2>Components</h2><table id=\"components\"><tr><th>component</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>mean ms</th></tr>");
    for (Quantiles q : components) {
      h.append(
          String.format(
              "<tr><td><span class=\"sw\" style=\"background:%s\"></span>%s</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>",
              HtmlPage.color(q.name()),
              q.name(),
              q.p50() / 1e6,
              q.p90() / 1e6,
              q.p99() / 1e6,
              q.mean() / 1e6));
    }
    h.append("</table>")
        .append(clientServer.html())
        .append(
            "<h2>Engines</h2><table id=\"engines\"><tr><th>engine layer read as</th><th>requests</th><th>cannot show</th></tr>");
    engines.forEach(
        (k, v) ->
            h.append("<tr><td>")
                .append(HtmlPage.escape(k.isEmpty() ? "(not recorded)" : k))
                .append("</td><td>")
                .append(v)
                .append("</td><td style=\"text-align:left\">")
                .append(HtmlPage.escape(EngineAdapters.cannotShow(k)))
                .append("</td></tr>"));
    h.append("</table>")
        .append(queueCauses.html())
        .append("<h2>TTFT distribution</h2>")
        .append(histogramSvg());
    h.append("<h2>Slowest requests</h2>").append(waterfallSvg()).append(gatewayCauses.html());
    h.append("<div class=\"legend\">");
    for (TtftComponent c : TtftComponent.all()) {
      h.append("<span title=\"")
          .append(HtmlPage.escape(c.description()))
          .append("\"><span class=\"sw\" style=\"background:")
          .append(c.colour())
          .append("\"></span>")
          .append(c.id())
          .append("</span>");
    }
    h.append("</div></body></html>\n");
    return h.toString();
  }

  private String histogramSvg() {
    long max = 1;
    for (long c : histogram) {
      max = Math.max(max, c);
    }
    int w = 720;
    int hgt = 200;
    double bw = w / (double) histogram.length;
    StringBuilder s =
        new StringBuilder(
            "<svg id=\"histogram\" width=\"" + w + "\" height=\"" + (hgt + 30) + "\">");
    for (int i = 0; i < histogram.length; i++) {
      double bh = hgt * histogram[i] / (double) max;
      s.append(
          String.format(
              "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#4C78A8\"><title>%.1f–%.1f ms: %d</title></rect>",
              i * bw + 1,
              hgt - bh,
              bw - 2,
              bh,
              i * histogramBucketNs / 1e6,
              (i + 1) * histogramBucketNs / 1e6,
              histogram[i]));
    }
    s.append(
        String.format(
            "<text x=\"0\" y=\"%d\">0 ms</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.1f ms</text>",
            hgt + 20, w, hgt + 20, histogram.length * histogramBucketNs / 1e6));
    return s.append("</svg>").toString();
  }

  private String waterfallSvg() {
    long max = 1;
    for (Slow s : slowest) {
      max = Math.max(max, s.ttftNs());
    }
    int w = 720;
    int rowH = 22;
    StringBuilder s =
        new StringBuilder(
            "<svg id=\"waterfall\" width=\""
                + (w + 300)
                + "\" height=\""
                + (slowest.size() * rowH + 10)
                + "\">");
    int y = 4;
    for (Slow r : slowest) {
      double x = 0;
      for (Map.Entry<String, Long> c : r.components().entrySet()) {
        double cw = w * c.getValue() / (double) max;
        if (cw > 0) {
          s.append(
              String.format(
                  "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %.3f ms</title></rect>",
                  x, y, cw, rowH - 6, HtmlPage.color(c.getKey()), c.getKey(), c.getValue() / 1e6));
        }
        x += cw;
      }
      s.append(
          String.format(
              "<text x=\"%.1f\" y=\"%d\" font-size=\"12\">%.1f ms %s</text>",
              x + 6, y + 12, r.ttftNs() / 1e6, r.traceId().substring(0, 12)));
      y += rowH;
    }
    return s.append("</svg>").toString();
  }
}
