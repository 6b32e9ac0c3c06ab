package dev.llmlat.load.sweep;

import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.LoadShape;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A load sweep, validated once: the same load run at rising levels of one axis, each point for the
 * base configuration's duration, and the share of requests that must meet the SLO for a point to
 * count as meeting it.
 *
 * @param base everything but the arrival shape (its duration is each point's); its warm-up goes
 *     before the first point only
 * @param axis what rises: the request rate (open loop) or the clients of a closed loop
 * @param levels the points' rates (req/s) or client counts, rising
 * @param poisson rate points arrive as a Poisson process (seeded by {@code seed}) instead of at
 *     constant gaps
 * @param seed the Poisson arrivals' seed
 * @param sloTarget the fraction of requests that must meet every SLO (goodput) for a point to meet
 *     the SLO, in (0, 1]
 */
public record SweepConfig(
    LoadConfig base, Axis axis, List<Double> levels, boolean poisson, long seed, double sloTarget) {
  /** The most points one sweep runs. */
  public static final int MAX_POINTS = 64;

  /** What a sweep raises. */
  public enum Axis {
    RATE("--sweep-rate", "req/s"),
    CONCURRENCY("--sweep-concurrency", "clients");

    private final String option;
    private final String unit;

    Axis(String option, String unit) {
      this.option = option;
      this.unit = unit;
    }

    /** The option that names the levels. */
    public String option() {
      return option;
    }

    public String unit() {
      return unit;
    }
  }

  public SweepConfig {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(axis, "axis");
    levels = List.copyOf(levels);
    require(!levels.isEmpty(), axis.option + " needs at least one level");
    require(
        levels.size() <= MAX_POINTS,
        axis.option + " takes at most " + MAX_POINTS + " levels, not " + levels.size());
    for (int i = 1; i < levels.size(); i++) {
      require(
          levels.get(i) > levels.get(i - 1),
          axis.option
              + " levels must rise: "
              + format(levels.get(i))
              + " comes after "
              + format(levels.get(i - 1)));
    }
    require(
        base.duration() != null,
        "a sweep runs each point for --duration: give one, e.g. --duration 60s");
    require(
        !(poisson && axis == Axis.CONCURRENCY),
        "--poisson shapes rates; " + axis.option + " runs closed loops");
    require(
        sloTarget > 0 && sloTarget <= 1,
        "--slo-target must be above 0% and at most 100%, not " + format(100 * sloTarget) + "%");
    for (int i = 0; i < levels.size(); i++) {
      if (axis == Axis.CONCURRENCY) {
        double level = levels.get(i);
        require(
            level == Math.rint(level) && level >= 1 && level <= 100_000,
            axis.option + " levels are client counts from 1 to 100000, not " + format(level));
      }
      try {
        shapeOf(axis, poisson, seed, levels.get(i));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            axis.option + " " + format(levels.get(i)) + ": " + e.getMessage(), e);
      }
    }
  }

  /**
   * Levels as users write them: {@code 1,2,4,8} (spaces allowed).
   *
   * @param option the option that gave them, for messages
   */
  public static List<Double> parseLevels(String option, String text) {
    List<Double> levels = new ArrayList<>();
    for (String part : text.split(",", -1)) {
      String p = part.strip();
      if (p.isEmpty()) {
        throw new IllegalArgumentException(
            option + " takes levels separated by commas, e.g. 1,2,4,8; not '" + text + "'");
      }
      try {
        double v = Double.parseDouble(p);
        if (!Double.isFinite(v)) {
          throw new NumberFormatException();
        }
        levels.add(v);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            option + " takes numbers separated by commas, e.g. 1,2,4,8; '" + p + "' is none");
      }
    }
    return levels;
  }

  /** The arrival shape of a point at {@code level}. */
  public LoadShape shape(double level) {
    return shapeOf(axis, poisson, seed, level);
  }

  // static: the compact constructor checks every level before the fields are set
  private static LoadShape shapeOf(Axis axis, boolean poisson, long seed, double level) {
    return switch (axis) {
      case RATE -> poisson ? new LoadShape.Poisson(level, seed) : new LoadShape.Constant(level);
      case CONCURRENCY -> new LoadShape.Closed((int) level);
    };
  }

  /** The run of point {@code index}: the base with its shape, the warm-up only before the first. */
  public LoadConfig point(int index) {
    return base.with(shape(levels.get(index)), index == 0 ? base.warmup() : 0);
  }

  /** A level with its unit: {@code 8 req/s}, {@code 16 clients}. */
  public String label(double level) {
    return format(level) + " " + axis.unit;
  }

  /** A level as people write it: {@code 4}, {@code 2.5}. */
  public static String format(double level) {
    return level == Math.rint(level) && Math.abs(level) < 1e15
        ? Long.toString((long) level)
        : String.format(Locale.ROOT, "%s", level);
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
