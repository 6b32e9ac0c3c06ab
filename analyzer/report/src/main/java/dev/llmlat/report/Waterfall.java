package dev.llmlat.report;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.ClockCorrection;
import dev.llmlat.attribution.UpstreamConnection;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.semconv.TtftComponent;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/**
 * The terminal rendering of one attribution: components as bars on one time axis, then the gaps.
 */
public final class Waterfall {
  private static final int WIDTH = 48;

  private Waterfall() {}

  /** What TTFT runs over, which depends on the first layer the trace reached. */
  static String span(Attribution a) {
    return switch (a.startLayer()) {
      case "client" ->
          String.format(
              "from the client's request to its first content chunk; the server's own %.3f ms",
              a.serverTtftNs() / 1e6);
      case "gateway" -> "from the gateway's server span to the first chunk written";
      default -> "from the engine's arrival to the first token";
    };
  }

  /**
   * Where a disaggregated request's component ran: {@code " decode decode-0"}, or each instance's
   * share when several.
   */
  static String instances(Attribution a, String component) {
    List<Attribution.InstancePart> parts = a.instancesOf(component);
    if (parts.size() == 1) {
      return "  " + parts.get(0).role() + " " + parts.get(0).instance();
    }
    StringBuilder out = new StringBuilder();
    for (Attribution.InstancePart p : parts) {
      out.append(out.isEmpty() ? "  " : ", ")
          .append(String.format("%s %s %.3f", p.role(), p.instance(), p.ns() / 1e6));
    }
    return out.toString();
  }

  /** How the gateway got its upstream connection, where its hooks saw it. */
  private static void upstream(Attribution a, PrintWriter out) {
    UpstreamConnection u = a.upstream();
    if (!u.observed()) {
      return;
    }
    StringBuilder line =
        new StringBuilder("upstream connection (").append(u.client()).append("): ");
    line.append(u.connection().isEmpty() ? "acquired" : u.connection());
    if (u.acquireStartNs() >= 0) {
      line.append(
          String.format(
              ", waited %.3f ms for it from %s",
              a.component(TtftComponent.UPSTREAM_POOL_WAIT) / 1e6, u.poolLabel()));
    }
    if (u.connectStartNs() >= 0) {
      line.append(String.format(", TCP connect %.3f ms", u.connectNs() / 1e6));
    }
    if (u.tlsStartNs() >= 0) {
      line.append(String.format(", TLS handshake %.3f ms", u.tlsNs() / 1e6));
    }
    out.println(line);
  }

  public static void print(Attribution a, PrintWriter out) {
    out.printf(
        "request %s  model %s  TTFT %.3f ms (%s)%n",
        a.traceId(), a.model().isEmpty() ? "?" : a.model(), a.ttftNs() / 1e6, span(a));
    String cannot = EngineAdapters.cannotShow(a.engineAdapter());
    out.printf(
        "engine %s (%s), read as %s%s%n",
        a.service(),
        a.engineInstance(),
        a.engineAdapter(),
        cannot.isEmpty() ? "" : "; cannot show: " + cannot);
    String instances =
        String.join(
            ", ",
            a.instanceParts().stream()
                .filter(p -> !p.role().equals("transfer"))
                .map(p -> p.role() + " on " + p.instance())
                .distinct()
                .toList());
    if (!instances.isEmpty()) {
      out.printf("disaggregated: %s%n", instances);
    }
    out.println();
    long t0 = a.criticalPath().isEmpty() ? a.arrivalNs() : a.criticalPath().get(0).startNs();
    double scale = a.ttftNs() == 0 ? 0 : WIDTH / (double) a.ttftNs();
    out.printf(
        "%-19s %10s  %s%n",
        "critical path",
        "ms",
        "0" + " ".repeat(WIDTH - 1) + String.format("%.1f ms", a.ttftNs() / 1e6));
    for (Attribution.Segment s : a.criticalPath()) {
      int from = (int) Math.round((s.startNs() - t0) * scale);
      int len = Math.max(1, (int) Math.round((s.endNs() - s.startNs()) * scale));
      out.printf(
          "%-19s %10.3f  %s%s  %s%s%n",
          s.component(),
          (s.endNs() - s.startNs()) / 1e6,
          " ".repeat(Math.min(WIDTH, from)),
          "#".repeat(Math.min(len, WIDTH + 1 - Math.min(WIDTH, from))),
          s.span(),
          s.instance().isEmpty() ? "" : "  [" + s.instance() + "]");
    }
    out.println();
    out.printf("%-19s %10s %6s%n", "component", "ms", "%");
    for (Map.Entry<String, Long> c : a.components().entrySet()) {
      if (c.getValue() != 0 || c.getKey().equals(TtftComponent.UNATTRIBUTED.id())) {
        out.printf(
            "%-19s %10.3f %5.1f%%%s%n",
            c.getKey(),
            c.getValue() / 1e6,
            a.ttftNs() == 0 ? 0 : 100.0 * c.getValue() / a.ttftNs(),
            instances(a, c.getKey()));
      }
    }
    out.printf("%-19s %10.3f%n", "= TTFT", a.ttftNs() / 1e6);
    for (Attribution.RankWait w : a.rankWaits()) {
      out.printf(
          "rank_wait: waited %.3f ms for %s (%s) in %d step%s%n",
          w.waitNs() / 1e6, w.rank(), w.device(), w.steps(), w.steps() == 1 ? "" : "s");
    }
    upstream(a, out);
    QueueBreakdownText.print(a, out);
    if (!a.itl().isEmpty()) {
      long[] g = a.gapsNs().clone();
      java.util.Arrays.sort(g);
      out.printf(
          "%ninter-token gaps: %d, p50 %.3f ms, max %.3f ms%n",
          g.length, g[g.length / 2] / 1e6, g[g.length - 1] / 1e6);
      for (Attribution.Gap gap : a.itl()) {
        if (!gap.cause().isEmpty()) {
          out.printf("  token %-4d %9.3f ms  %s%n", gap.index(), gap.gapNs() / 1e6, gap.cause());
        }
      }
    }
    for (ClockCorrection c : a.corrections()) {
      out.printf(
          "%nclock %s vs %s: %+.3f ms ± %.3f ms (%d pairs)%s%n",
          c.host(),
          c.relativeTo(),
          c.offsetAt(a.arrivalNs()) / 1e6,
          c.uncertaintyNs() / 1e6,
          c.pairs(),
          c.applied() ? "" : " not applied: " + c.note());
    }
    for (String note : a.notes()) {
      out.println("note: " + note);
    }
  }
}
