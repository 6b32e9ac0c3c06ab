package dev.llmlat.load.sweep;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.load.ServingMetrics;
import dev.llmlat.load.Slo;
import dev.llmlat.stats.Wilson;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What a sweep found, over the points that finished (a sweep stopped early sums up those): per
 * point vLLM's figures, goodput with its Wilson interval and the TTFT components' shares; the knee.
 *
 * @param config the sweep
 * @param points the finished points, in rising order
 * @param knee the knee of {@code points}
 * @param stopped whether it was stopped before every level ran
 */
public record SweepSummary(
    SweepConfig config, List<SweepPoint> points, Knee knee, boolean stopped) {
  private static final ObjectMapper JSON = new ObjectMapper();

  public SweepSummary {
    Objects.requireNonNull(config, "config");
    Objects.requireNonNull(knee, "knee");
    points = List.copyOf(points);
  }

  /** The summary of {@code points}, finding their knee. */
  public static SweepSummary of(SweepConfig config, List<SweepPoint> points, boolean stopped) {
    return new SweepSummary(
        config, points, Knee.find(points, config.base().slo().any(), config.sloTarget()), stopped);
  }

  /** The table of points, the knee, and each attributed point's TTFT components in words. */
  public void print(PrintWriter out) {
    String title =
        String.format(
            Locale.ROOT,
            " Load Sweep: %d of %d points, %s each ",
            points.size(),
            config.levels().size(),
            seconds(config.base().duration().toNanos() / 1e9));
    out.println(centred(title, '=', 118));
    out.println(
        String.format(
            Locale.ROOT,
            "%-14s %8s %8s %10s %10s %10s %10s %10s  %-26s",
            "Point",
            "Sent/s",
            "Req/s",
            "Out tok/s",
            "TTFT p50",
            "TTFT p99",
            "TPOT p50",
            "E2EL p99",
            "Goodput (95% CI)"));
    for (SweepPoint p : points) {
      ServingMetrics m = p.metrics();
      out.println(
          String.format(
              Locale.ROOT,
              "%-14s %8.2f %8.2f %10.1f %10.1f %10.1f %10.1f %10.1f  %-26s",
              config.label(p.level()),
              p.offeredPerSecond(),
              m.requestThroughput(),
              m.outputThroughput(),
              m.ttft().median(),
              m.ttft().p99(),
              m.tpot().median(),
              m.e2el().p99(),
              goodput(m.goodFraction())));
    }
    out.println("(latencies in ms)");
    if (stopped) {
      out.println(
          "stopped: the levels after "
              + (points.isEmpty() ? "the start" : config.label(points.getLast().level()))
              + " did not run");
    }
    out.println(capitalised(knee.describe(config)));
    boolean attributed = false;
    for (SweepPoint p : points) {
      if (p.shares() != null) {
        attributed = true;
        out.println(p.shares().sentence(config.label(p.level())));
      }
    }
    if (!attributed && !points.isEmpty()) {
      out.println(
          "TTFT components: none (the requests' spans reached no store this sweep could read)");
    }
    out.println("=".repeat(118));
  }

  /** The summary as JSON ({@code llmlat_sweep} of the result file). */
  public ObjectNode json() {
    ObjectNode o = JSON.createObjectNode();
    o.put("axis", config.axis().name().toLowerCase(Locale.ROOT));
    o.put("unit", config.axis().unit());
    ArrayNode levels = o.putArray("levels");
    config.levels().forEach(levels::add);
    o.put("point_duration_s", config.base().duration().toNanos() / 1e9);
    Slo slo = config.base().slo();
    if (slo.ttft() != null) {
      o.put("slo_ttft_ms", slo.ttft().toNanos() / 1e6);
    }
    if (slo.tpot() != null) {
      o.put("slo_tpot_ms", slo.tpot().toNanos() / 1e6);
    }
    o.put("slo_target", config.sloTarget());
    o.put("points_finished", points.size());
    o.put("stopped", stopped);
    ArrayNode list = o.putArray("points");
    for (SweepPoint p : points) {
      list.add(point(p));
    }
    ObjectNode k = o.putObject("knee");
    k.put("verdict", knee.verdict().name().toLowerCase(Locale.ROOT));
    if (knee.verdict() == Knee.Verdict.FOUND) {
      k.put("level", knee.point().level());
      Wilson.Interval g = knee.point().metrics().goodFraction();
      k.put("goodput", g.proportion()).put("ci95_low", g.low()).put("ci95_high", g.high());
    } else if (knee.verdict() == Knee.Verdict.ABOVE_RANGE) {
      k.put("above_level", knee.point().level());
    }
    if (knee.firstMiss() != null) {
      k.put("first_miss_level", knee.firstMiss().level());
    }
    if (knee.growth() != null) {
      k.putObject("grew_most")
          .put("what", knee.growth().what())
          .put("from_ms", knee.growth().fromMs())
          .put("to_ms", knee.growth().toMs());
    }
    k.put("uncertain", knee.uncertain());
    ArrayNode again = k.putArray("met_again_at");
    knee.metAgainAt().forEach(again::add);
    k.put("text", knee.describe(config));
    return o;
  }

  private ObjectNode point(SweepPoint p) {
    ServingMetrics m = p.metrics();
    ObjectNode o = JSON.createObjectNode();
    o.put("index", p.index());
    o.put("level", p.level());
    o.put("label", config.label(p.level()));
    o.put("offered_per_s", p.offeredPerSecond());
    o.put("completed", m.completed());
    o.put("failed", m.failed());
    o.put("request_throughput", m.requestThroughput());
    o.put("output_throughput", m.outputThroughput());
    o.put("median_ttft_ms", m.ttft().median());
    o.put("p99_ttft_ms", m.ttft().p99());
    o.put("median_tpot_ms", m.tpot().median());
    o.put("p99_e2el_ms", m.e2el().p99());
    if (m.goodFraction() != null) {
      o.putObject("goodput")
          .put("good", m.good())
          .put("requests", m.completed() + m.failed())
          .put("fraction", m.goodFraction().proportion())
          .put("ci95_low", m.goodFraction().low())
          .put("ci95_high", m.goodFraction().high())
          .put("meets_slo", p.meets(config.sloTarget()));
    }
    if (p.shares() != null) {
      ComponentShares s = p.shares();
      ObjectNode c = o.putObject("ttft_components");
      c.put("requests", s.requests());
      c.put("ttft_ns", s.ttftNs());
      ObjectNode shares = c.putObject("shares");
      ObjectNode means = c.putObject("mean_ms");
      for (Map.Entry<String, Long> e : s.componentNs().entrySet()) {
        shares.put(e.getKey(), s.share(e.getKey()));
        means.put(e.getKey(), s.meanMs(e.getKey()));
      }
      ArrayNode limits = c.putArray("limits");
      for (ComponentShares.Limit l : s.limits()) {
        limits
            .addObject()
            .put("kind", l.kind())
            .put("example", l.example())
            .put("requests", l.requests())
            .put("queue_ns", l.queueNs());
      }
      c.put("text", s.sentence(config.label(p.level())));
    }
    return o;
  }

  static String goodput(Wilson.Interval g) {
    return g == null
        ? "-"
        : String.format(
            Locale.ROOT,
            "%.1f%% (%.1f-%.1f%%)",
            100 * g.proportion(),
            100 * g.low(),
            100 * g.high());
  }

  private static String seconds(double s) {
    return s == Math.rint(s) ? (long) s + " s" : String.format(Locale.ROOT, "%.1f s", s);
  }

  private static String capitalised(String s) {
    return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  private static String centred(String text, char fill, int width) {
    int pad = Math.max(0, width - text.length());
    return String.valueOf(fill).repeat(pad / 2) + text + String.valueOf(fill).repeat(pad - pad / 2);
  }
}
