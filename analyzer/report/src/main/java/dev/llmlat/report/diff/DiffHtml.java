package dev.llmlat.report.diff;

import dev.llmlat.report.HtmlPage;
import java.util.List;
import java.util.Locale;

/**
 * A {@link Comparison} as one self-contained HTML page in the report's style: the table of changes,
 * what explains TTFT's, the components' mean changes with their intervals as a chart, the stalls.
 */
public final class DiffHtml {
  private DiffHtml() {}

  public static String page(Comparison c) {
    StringBuilder h = new StringBuilder(HtmlPage.head("llmlat diff"));
    h.append("<h1>What moved from A to B</h1><p id=\"sides\">A: ")
        .append(HtmlPage.escape(c.a().label()))
        .append(" (")
        .append(c.a().requests())
        .append(" requests)<br>B: ")
        .append(HtmlPage.escape(c.b().label()))
        .append(" (")
        .append(c.b().requests())
        .append(" requests)</p>");
    for (String note : c.notes()) {
      h.append("<p class=\"note\">").append(HtmlPage.escape(note)).append("</p>");
    }
    h.append(
        String.format(
            Locale.ROOT,
            "<p>B &minus; A with bootstrap %.0f%% intervals (%d resamples of each side); a change"
                + " counts when its interval leaves 0 out and it is at least %.3f ms or %.1f%% of A.</p>",
            100 * c.level(),
            c.resamples(),
            c.options().noiseFloorNs() / 1e6,
            100 * c.options().noiseFloorRelative()));
    h.append("<h2>What explains the change</h2><ul id=\"explained\">");
    for (Comparison.Explanation e : c.explanations()) {
      h.append("<li>").append(HtmlPage.escape(DiffText.explanation(e))).append("</li>");
    }
    h.append("</ul><p>Each component's mean change, its 95% interval as a whisker:</p>")
        .append(meanChart(c));
    h.append(
        "<h2>TTFT and its components</h2><table id=\"diff\"><tr><th>ms</th><th></th><th>A</th><th>B</th><th>B &minus; A</th>"
            + "<th>95% interval</th><th>verdict</th></tr>");
    Comparison.Quantity ttft = c.quantity(SampleComparison.TTFT);
    for (Comparison.Quantity q : c.quantities()) {
      if (q.zero()
          || q.name().equals(SampleComparison.SERVER_TTFT)
              && q.statistics().equals(ttft.statistics())) {
        continue;
      }
      for (Comparison.Statistic s : q.statistics()) {
        h.append("<tr><td>")
            .append(swatch(q.name()))
            .append(HtmlPage.escape(DiffText.label(q.name())))
            .append("</td><td>")
            .append(s.name())
            .append("</td>")
            .append(cells(s, 1e6, "%.3f", "%+.3f"))
            .append("</tr>");
      }
    }
    h.append(
        "</table><h2>Inter-token stalls</h2><table id=\"stalls\"><tr><th></th><th></th><th>A</th><th>B</th>"
            + "<th>B &minus; A</th><th>95% interval</th><th>verdict</th></tr>");
    for (Comparison.Quantity q : c.stalls().shares()) {
      h.append("<tr><td>")
          .append(
              HtmlPage.escape(
                  q.name().equals(SampleComparison.STALLED) ? "requests with a stall" : q.name()))
          .append("</td><td>share %</td>")
          .append(cells(q.statistics().get(0), 0.01, "%.1f", "%+.1f"))
          .append("</tr>");
    }
    for (Comparison.Quantity q : c.stalls().gaps()) {
      h.append("<tr><td>")
          .append(q.name().equals("itl_p50") ? "median gap" : "p99 gap")
          .append("</td><td>mean ms</td>")
          .append(cells(q.statistics().get(0), 1e6, "%.3f", "%+.3f"))
          .append("</tr>");
    }
    return h.append("</table></body></html>\n").toString();
  }

  private static String cells(Comparison.Statistic s, double unit, String plain, String signed) {
    String colour =
        switch (s.verdict()) {
          case UP -> "#C0392B";
          case DOWN -> "#1E8449";
          case NO_CHANGE -> "#777";
        };
    return String.format(
        Locale.ROOT,
        "<td>"
            + plain
            + "</td><td>"
            + plain
            + "</td><td>"
            + signed
            + "</td><td>["
            + signed
            + ", "
            + signed
            + "]</td><td style=\"color:%s\">%s</td>",
        s.a() / unit,
        s.b() / unit,
        s.delta().estimate() / unit,
        s.delta().low() / unit,
        s.delta().high() / unit,
        colour,
        s.verdict());
  }

  private static String swatch(String quantity) {
    return quantity.startsWith("ttft") || quantity.equals(SampleComparison.SERVER_TTFT)
        ? ""
        : "<span class=\"sw\" style=\"background:" + HtmlPage.color(quantity) + "\"></span>";
  }

  /** Each component's mean change as a bar from 0, its interval as a whisker. */
  private static String meanChart(Comparison c) {
    List<Comparison.Quantity> parts =
        c.quantities().subList(2, c.quantities().size()).stream().filter(q -> !q.zero()).toList();
    double max = 1;
    for (Comparison.Quantity q : parts) {
      Comparison.Statistic m = q.statistic(SampleComparison.MEAN);
      max = Math.max(max, Math.max(Math.abs(m.delta().low()), Math.abs(m.delta().high())));
    }
    int labels = 150;
    int half = 260;
    int row = 22;
    StringBuilder s =
        new StringBuilder(
            "<svg id=\"deltas\" width=\""
                + (labels + 2 * half + 90)
                + "\" height=\""
                + (parts.size() * row + 10)
                + "\">");
    double zero = labels + half;
    s.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\"/>",
            zero,
            zero,
            parts.size() * row + 10));
    int y = 4;
    for (Comparison.Quantity q : parts) {
      Comparison.Statistic m = q.statistic(SampleComparison.MEAN);
      double x = zero + half * m.delta().estimate() / max;
      s.append(
          String.format(
              Locale.ROOT,
              "<text x=\"0\" y=\"%d\" font-size=\"12\">%s</text>",
              y + 12,
              HtmlPage.escape(q.name())));
      s.append(
          String.format(
              Locale.ROOT,
              "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %+.3f ms</title></rect>",
              Math.min(x, zero),
              y,
              Math.abs(x - zero),
              row - 8,
              HtmlPage.color(q.name()),
              HtmlPage.escape(q.name()),
              m.delta().estimate() / 1e6));
      double lo = zero + half * m.delta().low() / max;
      double hi = zero + half * m.delta().high() / max;
      int mid = y + (row - 8) / 2;
      s.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>",
              lo,
              mid,
              hi,
              mid));
      s.append(
          String.format(
              Locale.ROOT,
              "<text x=\"%d\" y=\"%d\" font-size=\"12\">%+.3f ms</text>",
              labels + 2 * half + 8,
              y + 12,
              m.delta().estimate() / 1e6));
      y += row;
    }
    return s.append("</svg>").toString();
  }
}
