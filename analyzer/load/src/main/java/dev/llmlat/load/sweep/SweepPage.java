package dev.llmlat.load.sweep;

import dev.llmlat.load.ServingMetrics;
import dev.llmlat.load.Slo;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.stats.Wilson;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A sweep as one self-contained HTML page (inline SVG and CSS; no script, nothing fetched): the
 * throughput-latency curve with the SLO and the knee, goodput with its interval against load, the
 * TTFT components' shares stacked against load with the binding scheduler limit, and the table of
 * points.
 */
public final class SweepPage {
  static final String P50 = "#4C78A8";
  static final String P99 = "#F58518";
  static final String MET = "#54A24B";
  static final String MISSED = "#D62728";
  private static final String OTHER = "#999999";

  private static final int W = 760;
  private static final int H = 340;
  private static final int LEFT = 70;
  private static final int RIGHT = 20;
  private static final int TOP = 20;
  private static final int BOTTOM = 70;

  private SweepPage() {}

  public static String html(SweepSummary summary) {
    SweepConfig config = summary.config();
    StringBuilder h = new StringBuilder(32_768);
    h.append(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>llmlat load sweep</title><style>")
        .append("body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:820px}")
        .append("h1{font-size:20px}h2{font-size:16px;margin-top:28px}")
        .append(
            "table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}")
        .append(
            "th:first-child,td:first-child{text-align:left;white-space:nowrap}svg text{font:11px system-ui,sans-serif;fill:#333}")
        .append(
            ".legend span{display:inline-block;margin-right:12px}.legend i{display:inline-block;width:12px;height:12px;")
        .append(
            "margin-right:4px;vertical-align:middle}#knee{font-weight:600}</style></head><body>\n");
    h.append("<h1>Load sweep: ")
        .append(summary.points().size())
        .append(" of ")
        .append(config.levels().size())
        .append(" points (")
        .append(esc(config.axis().option()))
        .append(' ')
        .append(esc(String.join(",", config.levels().stream().map(SweepConfig::format).toList())))
        .append("), ")
        .append(fmt(config.base().duration().toNanos() / 1e9))
        .append(" s each</h1>\n");
    h.append("<p id=\"knee\">")
        .append(esc(capitalised(summary.knee().describe(config))))
        .append("</p>\n");
    if (summary.stopped()) {
      h.append("<p>Stopped: the levels after the last point shown did not run.</p>\n");
    }
    if (summary.points().isEmpty()) {
      h.append("<p>No point finished.</p></body></html>\n");
      return h.toString();
    }
    h.append("<h2>Throughput and TTFT</h2>\n");
    curve(h, summary);
    if (config.base().slo().any()) {
      h.append("<h2>Goodput against load</h2>\n");
      goodput(h, summary);
    }
    h.append("<h2>TTFT components against load</h2>\n");
    components(h, summary);
    h.append("<h2>Points</h2>\n");
    table(h, summary);
    h.append("</body></html>\n");
    return h.toString();
  }

  /** Request throughput (x) against TTFT median and p99 (y), each point labelled with its level. */
  private static void curve(StringBuilder h, SweepSummary summary) {
    SweepConfig config = summary.config();
    List<SweepPoint> points = summary.points();
    double xMax = 0;
    double yMax = 0;
    for (SweepPoint p : points) {
      xMax = Math.max(xMax, p.metrics().requestThroughput());
      yMax = Math.max(yMax, p.metrics().ttft().p99());
    }
    Slo slo = config.base().slo();
    double sloMs = slo.ttft() == null ? -1 : slo.ttft().toNanos() / 1e6;
    yMax = Math.max(yMax, sloMs);
    double[] xTicks = ticks(xMax);
    double[] yTicks = ticks(yMax);
    Axes a = new Axes(xTicks[xTicks.length - 1], yTicks[yTicks.length - 1]);
    h.append(svgOpen("curve"));
    a.frame(h, xTicks, yTicks, "request throughput (req/s)", "TTFT (ms)");
    if (sloMs > 0) {
      h.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"6 4\"/>",
              a.x(0),
              a.y(sloMs),
              a.x(a.xMax),
              a.y(sloMs),
              MET));
      h.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">SLO TTFT %s ms</text>",
              a.x(a.xMax) - 4,
              a.y(sloMs) - 4,
              fmt(sloMs)));
    }
    polyline(h, a, points, true, P50);
    polyline(h, a, points, false, P99);
    SweepPoint knee =
        summary.knee().verdict() == Knee.Verdict.FOUND ? summary.knee().point() : null;
    for (SweepPoint p : points) {
      ServingMetrics m = p.metrics();
      double x = a.x(m.requestThroughput());
      h.append(
          String.format(
              Locale.ROOT,
              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s: TTFT p50 %s ms</title></circle>",
              x,
              a.y(m.ttft().median()),
              P50,
              esc(config.label(p.level())),
              fmt(m.ttft().median())));
      h.append(
          String.format(
              Locale.ROOT,
              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s: TTFT p99 %s ms</title></circle>",
              x,
              a.y(m.ttft().p99()),
              P99,
              esc(config.label(p.level())),
              fmt(m.ttft().p99())));
      h.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
              x,
              a.y(m.ttft().p99()) - 9,
              esc(config.label(p.level()))));
      if (p == knee) {
        h.append(
            String.format(
                Locale.ROOT,
                "<circle id=\"knee-mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"10\" fill=\"none\" stroke=\"#222\""
                    + " stroke-width=\"2\"><title>the knee</title></circle>",
                x,
                a.y(m.ttft().median())));
      }
    }
    legend(h, 0, List.of(new String[] {"TTFT p50", P50}, new String[] {"TTFT p99", P99}));
    h.append("</svg>\n");
  }

  private static void polyline(
      StringBuilder h, Axes a, List<SweepPoint> points, boolean median, String colour) {
    StringBuilder coords = new StringBuilder();
    for (SweepPoint p : points) {
      double y = median ? p.metrics().ttft().median() : p.metrics().ttft().p99();
      coords.append(
          String.format(Locale.ROOT, "%.1f,%.1f ", a.x(p.metrics().requestThroughput()), a.y(y)));
    }
    h.append("<polyline fill=\"none\" stroke=\"")
        .append(colour)
        .append("\" stroke-width=\"2\"")
        .append(median ? "" : " stroke-dasharray=\"5 3\"")
        .append(" points=\"")
        .append(coords.toString().strip())
        .append("\"/>");
  }

  /** Goodput per point with its Wilson interval, the target as a line; points that met it green. */
  private static void goodput(StringBuilder h, SweepSummary summary) {
    SweepConfig config = summary.config();
    List<SweepPoint> points = summary.points();
    Axes a = new Axes(points.size(), 100);
    double[] yTicks = {0, 20, 40, 60, 80, 100};
    h.append(svgOpen("goodput"));
    a.frameCategories(h, points, config, yTicks, "goodput (% of requests meeting every SLO)");
    double target = 100 * config.sloTarget();
    h.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" stroke-dasharray=\"6 4\"/>"
                + "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">target %s%%</text>",
            a.x(0),
            a.y(target),
            a.x(a.xMax),
            a.y(target),
            a.x(a.xMax) - 4,
            a.y(target) - 4,
            fmt(target)));
    for (int i = 0; i < points.size(); i++) {
      SweepPoint p = points.get(i);
      Wilson.Interval g = p.metrics().goodFraction();
      if (g == null) {
        continue;
      }
      double x = a.x(i + 0.5);
      String colour = p.meets(config.sloTarget()) ? MET : MISSED;
      h.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>",
              x,
              a.y(100 * g.low()),
              x,
              a.y(100 * g.high()),
              colour));
      h.append(
          String.format(
              Locale.ROOT,
              "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>%s: %s</title></circle>",
              x,
              a.y(100 * g.proportion()),
              colour,
              esc(config.label(p.level())),
              esc(SweepSummary.goodput(g))));
    }
    h.append("</svg>\n");
  }

  /**
   * One bar per point, its TTFT split into the components' shares (100% stacked), the binding limit
   * above it.
   */
  private static void components(StringBuilder h, SweepSummary summary) {
    SweepConfig config = summary.config();
    List<SweepPoint> points = summary.points();
    if (points.stream().allMatch(p -> p.shares() == null)) {
      h.append(
          "<p id=\"components-none\">No TTFT components: the requests' spans reached no store this sweep could read"
              + " (send spans, to Kafka with the ingester running or --to store, and keep the engine's spans on the same path).</p>\n");
      return;
    }
    Set<String> present = new LinkedHashSet<>();
    for (SweepPoint p : points) {
      if (p.shares() != null) {
        p.shares()
            .componentNs()
            .forEach(
                (c, ns) -> {
                  if (ns > 0) {
                    present.add(c);
                  }
                });
      }
    }
    Axes a = new Axes(points.size(), 100);
    double[] yTicks = {0, 20, 40, 60, 80, 100};
    h.append(svgOpen("components"));
    a.frameCategories(h, points, config, yTicks, "share of TTFT (%)");
    double slot = a.x(1) - a.x(0);
    double width = Math.min(60, slot * 0.6);
    for (int i = 0; i < points.size(); i++) {
      ComponentShares s = points.get(i).shares();
      if (s == null || s.ttftNs() == 0) {
        continue;
      }
      double x = a.x(i + 0.5) - width / 2;
      double base = 0;
      for (String c : s.componentNs().keySet()) {
        double share = 100 * s.share(c);
        if (share <= 0) {
          continue;
        }
        h.append(
            String.format(
                Locale.ROOT,
                "<rect class=\"share\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                    + "<title>%s: %s %.1f%% of TTFT (mean %.1f ms)</title></rect>",
                x,
                a.y(base + share),
                width,
                a.y(base) - a.y(base + share),
                colour(c),
                esc(config.label(points.get(i).level())),
                esc(c),
                share,
                s.meanMs(c)));
        base += share;
      }
      ComponentShares.Limit limit = s.binding();
      if (limit != null) {
        h.append(
            String.format(
                Locale.ROOT,
                "<text class=\"limit\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                a.x(i + 0.5),
                a.y(0) + 30 + 12 * (i % 2),
                esc(limit.example())));
      }
    }
    h.append("</svg>\n<p class=\"legend\">");
    for (String c : present) {
      h.append("<span title=\"")
          .append(esc(TtftComponent.byId(c).map(TtftComponent::description).orElse(c)))
          .append("\"><i style=\"background:")
          .append(colour(c))
          .append("\"></i>")
          .append(esc(c))
          .append("</span>");
    }
    h.append("</p>\n<ul id=\"sentences\">");
    for (SweepPoint p : points) {
      if (p.shares() != null) {
        h.append("<li>").append(esc(p.shares().sentence(config.label(p.level())))).append("</li>");
      }
    }
    h.append("</ul>\n");
  }

  private static void table(StringBuilder h, SweepSummary summary) {
    SweepConfig config = summary.config();
    h.append(
        "<table id=\"points\"><tr><th>Point</th><th>Sent/s</th><th>Req/s</th><th>Out tok/s</th><th>TTFT p50 ms</th>"
            + "<th>TTFT p99 ms</th><th>TPOT p50 ms</th><th>Goodput (95% CI)</th><th>Largest TTFT part</th></tr>\n");
    for (SweepPoint p : summary.points()) {
      ServingMetrics m = p.metrics();
      String largest =
          p.shares() == null || p.shares().ranked().isEmpty()
              ? "-"
              : String.format(
                  Locale.ROOT,
                  "%s %.0f%%",
                  p.shares().ranked().getFirst(),
                  100 * p.shares().share(p.shares().ranked().getFirst()));
      h.append("<tr><td>")
          .append(esc(config.label(p.level())))
          .append("</td><td>")
          .append(fmt(p.offeredPerSecond()))
          .append("</td><td>")
          .append(fmt(m.requestThroughput()))
          .append("</td><td>")
          .append(fmt(m.outputThroughput()))
          .append("</td><td>")
          .append(fmt(m.ttft().median()))
          .append("</td><td>")
          .append(fmt(m.ttft().p99()))
          .append("</td><td>")
          .append(fmt(m.tpot().median()))
          .append("</td><td>")
          .append(esc(SweepSummary.goodput(m.goodFraction())))
          .append("</td><td>")
          .append(esc(largest))
          .append("</td></tr>\n");
    }
    h.append("</table>\n");
  }

  private static void legend(StringBuilder h, int row, List<String[]> entries) {
    double x = LEFT + 10;
    for (String[] e : entries) {
      h.append(
          String.format(
              Locale.ROOT,
              "<rect x=\"%.1f\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">%s</text>",
              x,
              TOP + 8 + 14 * row,
              e[1],
              x + 16,
              TOP + 12 + 14 * row,
              esc(e[0])));
      x += 90;
    }
  }

  /** A component's colour, the one it has in every chart. */
  static String colour(String component) {
    return TtftComponent.byId(component).map(TtftComponent::colour).orElse(OTHER);
  }

  private static String svgOpen(String id) {
    return "<svg id=\""
        + id
        + "\" width=\""
        + W
        + "\" height=\""
        + H
        + "\" viewBox=\"0 0 "
        + W
        + " "
        + H
        + "\" role=\"img\">";
  }

  /** Round ticks from 0 to at least {@code max}. */
  static double[] ticks(double max) {
    if (!(max > 0)) {
      return new double[] {0, 1};
    }
    double raw = max / 5;
    double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    double step = magnitude;
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      step = m * magnitude;
      if (step >= raw) {
        break;
      }
    }
    List<Double> out = new ArrayList<>();
    for (double t = 0; out.isEmpty() || out.getLast() < max; t += step) {
      out.add(t);
    }
    return out.stream().mapToDouble(Double::doubleValue).toArray();
  }

  /** A plot area's scales. */
  private static final class Axes {
    final double xMax;
    final double yMax;

    Axes(double xMax, double yMax) {
      this.xMax = xMax > 0 ? xMax : 1;
      this.yMax = yMax > 0 ? yMax : 1;
    }

    double x(double v) {
      return LEFT + (W - LEFT - RIGHT) * v / xMax;
    }

    double y(double v) {
      return TOP + (H - TOP - BOTTOM) * (1 - v / yMax);
    }

    void frame(StringBuilder h, double[] xTicks, double[] yTicks, String xLabel, String yLabel) {
      yAxis(h, yTicks, yLabel);
      for (double t : xTicks) {
        h.append(
            String.format(
                Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>"
                    + "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                x(t),
                y(0),
                x(t),
                y(0) + 4,
                x(t),
                y(0) + 16,
                fmt(t)));
      }
      h.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
              x(xMax / 2),
              H - 8,
              esc(xLabel)));
    }

    void frameCategories(
        StringBuilder h,
        List<SweepPoint> points,
        SweepConfig config,
        double[] yTicks,
        String yLabel) {
      yAxis(h, yTicks, yLabel);
      for (int i = 0; i < points.size(); i++) {
        h.append(
            String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
                x(i + 0.5),
                y(0) + 16,
                esc(config.label(points.get(i).level()))));
      }
      h.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">offered load (%s)</text>",
              x(xMax / 2),
              H - 8,
              esc(config.axis().unit())));
    }

    private void yAxis(StringBuilder h, double[] yTicks, String yLabel) {
      h.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\"/>",
              x(0),
              y(0),
              x(xMax),
              y(0)));
      for (double t : yTicks) {
        h.append(
            String.format(
                Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                    + "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                x(0),
                y(t),
                x(xMax),
                y(t),
                x(0) - 6,
                y(t) + 4,
                fmt(t)));
      }
      h.append(
          String.format(
              Locale.ROOT,
              "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>",
              y(yMax / 2),
              esc(yLabel)));
    }
  }

  static String fmt(double v) {
    if (v == Math.rint(v) && Math.abs(v) < 1e12) {
      return Long.toString((long) v);
    }
    return String.format(
        Locale.ROOT, Math.abs(v) >= 100 ? "%.0f" : Math.abs(v) >= 10 ? "%.1f" : "%.2f", v);
  }

  private static String capitalised(String s) {
    return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  static String esc(String s) {
    StringBuilder out = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      switch (c) {
        case '<' -> out.append("&lt;");
        case '>' -> out.append("&gt;");
        case '&' -> out.append("&amp;");
        case '"' -> out.append("&quot;");
        default -> out.append(c);
      }
    }
    return out.toString();
  }
}
