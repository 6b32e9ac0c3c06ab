package dev.llmlat.load.sweep;

import dev.llmlat.stats.Wilson;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The knee of a sweep: the highest level up to which every point met the SLO (at least the target
 * share of requests met every objective), the first point past it, and what grew most between the
 * two. The knee is the last point before the first miss, not the highest point that met it: a point
 * that meets the SLO again above a miss is noise (named in {@link #metAgainAt}), and the load a
 * service can take is the load below its first miss.
 *
 * @param verdict whether a knee was found within the levels swept
 * @param point the knee ({@link Verdict#FOUND}), or the highest point when every point met the SLO
 *     ({@link Verdict#ABOVE_RANGE}); else null
 * @param firstMiss the first point that missed the SLO; null when none did
 * @param growth what grew most from the knee to the first miss; null unless found
 * @param uncertain the knee's goodput interval reaches below the target, or the first miss's above
 *     it: more requests per point (a longer --duration) would tell
 * @param metAgainAt levels above the first miss that met the SLO again
 */
public record Knee(
    Verdict verdict,
    SweepPoint point,
    SweepPoint firstMiss,
    Growth growth,
    boolean uncertain,
    List<Double> metAgainAt) {
  /** Where the knee lies. */
  public enum Verdict {
    /** Between the knee point and the first miss. */
    FOUND,
    /** Every point met the SLO: the knee lies above the highest level. */
    ABOVE_RANGE,
    /** Even the lowest level missed it: the knee lies below. */
    BELOW_RANGE,
    /** No SLO was given: goodput, and with it the knee, is undefined. */
    NO_SLO,
    /** No point finished. */
    NO_POINTS
  }

  /**
   * What grew most past the knee: a TTFT component (mean per request, where both points were
   * attributed) or, without components, the client's figure that grew by the largest factor.
   *
   * @param what the component ({@code queue}) or figure ({@code TTFT}, {@code TPOT}, {@code client
   *     queue})
   * @param fromMs its mean at the knee, ms
   * @param toMs its mean at the first miss, ms
   */
  public record Growth(String what, double fromMs, double toMs) {}

  public Knee {
    metAgainAt = List.copyOf(metAgainAt);
  }

  /**
   * The knee of {@code points} (in rising order) for an SLO met by {@code target} of requests;
   * {@code slo}: whether one was given.
   */
  public static Knee find(List<SweepPoint> points, boolean slo, double target) {
    if (!slo) {
      return new Knee(Verdict.NO_SLO, null, null, null, false, List.of());
    }
    if (points.isEmpty()) {
      return new Knee(Verdict.NO_POINTS, null, null, null, false, List.of());
    }
    int miss = -1;
    for (int i = 0; i < points.size(); i++) {
      if (!points.get(i).meets(target)) {
        miss = i;
        break;
      }
    }
    if (miss < 0) {
      SweepPoint last = points.getLast();
      return new Knee(Verdict.ABOVE_RANGE, last, null, null, lowBelow(last, target), List.of());
    }
    SweepPoint firstMiss = points.get(miss);
    List<Double> again = new ArrayList<>();
    for (SweepPoint p : points.subList(miss + 1, points.size())) {
      if (p.meets(target)) {
        again.add(p.level());
      }
    }
    if (miss == 0) {
      return new Knee(
          Verdict.BELOW_RANGE, null, firstMiss, null, highAbove(firstMiss, target), again);
    }
    SweepPoint knee = points.get(miss - 1);
    return new Knee(
        Verdict.FOUND,
        knee,
        firstMiss,
        growth(knee, firstMiss),
        lowBelow(knee, target) || highAbove(firstMiss, target),
        again);
  }

  /** The knee in words, for the summary. */
  public String describe(SweepConfig config) {
    String target = String.format(Locale.ROOT, "%.0f%%", 100 * config.sloTarget());
    return switch (verdict) {
      case NO_SLO ->
          "no knee: give --slo-ttft and/or --slo-tpot to find the highest load meeting them";
      case NO_POINTS -> "no knee: no point finished";
      case ABOVE_RANGE ->
          "every point met the SLO ("
              + target
              + " of requests): the knee lies above "
              + config.label(point.level())
              + uncertainty();
      case BELOW_RANGE ->
          "even "
              + config.label(firstMiss.level())
              + " missed the SLO (goodput "
              + goodput(firstMiss)
              + ", target "
              + target
              + "): the knee lies below the lowest level"
              + uncertainty()
              + again(config);
      case FOUND ->
          "knee: "
              + config.label(point.level())
              + " (goodput "
              + goodput(point)
              + ", target "
              + target
              + "); at "
              + config.label(firstMiss.level())
              + " goodput fell to "
              + goodput(firstMiss)
              + (growth == null ? "" : "; past it " + growthText())
              + uncertainty()
              + again(config);
    };
  }

  /** What grew in words: "queue grew most: mean 42.0 -> 610.0 ms per request". */
  public String growthText() {
    if (growth == null) {
      return "";
    }
    return String.format(
        Locale.ROOT,
        "%s grew most: mean %.1f -> %.1f ms per request",
        growth.what(),
        growth.fromMs(),
        growth.toMs());
  }

  private String uncertainty() {
    return uncertain
        ? " (uncertain: the goodput intervals reach across the target; a longer --duration narrows them)"
        : "";
  }

  private String again(SweepConfig config) {
    if (metAgainAt.isEmpty()) {
      return "";
    }
    return "; "
        + String.join(", ", metAgainAt.stream().map(config::label).toList())
        + " met it again (noise: a longer --duration tells)";
  }

  private static String goodput(SweepPoint p) {
    Wilson.Interval g = p.metrics().goodFraction();
    if (g == null) {
      return "none finished";
    }
    return String.format(
        Locale.ROOT,
        "%.1f%%, 95%% CI %.1f-%.1f%%",
        100 * g.proportion(),
        100 * g.low(),
        100 * g.high());
  }

  private static boolean lowBelow(SweepPoint p, double target) {
    return p.metrics().goodFraction() != null && p.metrics().goodFraction().low() < target;
  }

  private static boolean highAbove(SweepPoint p, double target) {
    return p.metrics().goodFraction() != null && p.metrics().goodFraction().high() >= target;
  }

  /**
   * The component whose mean per request grew most (both points attributed), else the client's
   * figure that grew by the largest factor (TTFT, TPOT, and the client's own queue when it had
   * one).
   */
  static Growth growth(SweepPoint knee, SweepPoint next) {
    if (knee.shares() != null
        && next.shares() != null
        && knee.shares().requests() > 0
        && next.shares().requests() > 0) {
      Growth best = null;
      for (String c : next.shares().componentNs().keySet()) {
        Growth g = new Growth(c, knee.shares().meanMs(c), next.shares().meanMs(c));
        if (best == null || g.toMs() - g.fromMs() > best.toMs() - best.fromMs()) {
          best = g;
        }
      }
      if (best != null && best.toMs() > best.fromMs()) {
        return best;
      }
    }
    List<Growth> figures =
        new ArrayList<>(
            List.of(
                new Growth("TTFT", knee.metrics().ttft().mean(), next.metrics().ttft().mean()),
                new Growth("TPOT", knee.metrics().tpot().mean(), next.metrics().tpot().mean())));
    if (next.metrics().queue().mean() > 0) {
      figures.add(
          new Growth("client queue", knee.metrics().queue().mean(), next.metrics().queue().mean()));
    }
    Growth best = null;
    for (Growth g : figures) {
      if (g.toMs() > g.fromMs() && (best == null || factor(g) > factor(best))) {
        best = g;
      }
    }
    return best;
  }

  private static double factor(Growth g) {
    return g.fromMs() > 0 ? g.toMs() / g.fromMs() : Double.POSITIVE_INFINITY;
  }
}
