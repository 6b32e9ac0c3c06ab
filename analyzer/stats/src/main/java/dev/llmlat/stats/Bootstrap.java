package dev.llmlat.stats;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.ToDoubleFunction;

/**
 * Percentile bootstrap intervals: the statistic recomputed on samples drawn with replacement, and
 * the middle 95% (or another level) of what it came out as. The seed is fixed, so the same data
 * always give the same interval.
 */
public final class Bootstrap {
  /** The resamples every interval here takes. */
  public static final int RESAMPLES = 2000;
  private static final long SEED = 42;

  private Bootstrap() {}

  /** An interval around a statistic's value on the whole sample. */
  public record Interval(double estimate, double low, double high) {}

  /** The 95% interval of {@code statistic} over {@code values}. */
  public static Interval of(double[] values, ToDoubleFunction<double[]> statistic) {
    return stratified(List.of(values), statistic, 0.95);
  }

  /**
   * The {@code level} interval of {@code statistic} over all groups' values together, resampling
   * within each group (several runs of a benchmark, each a group, so differences between runs are
   * not taken for noise within one).
   */
  public static Interval stratified(List<double[]> groups, ToDoubleFunction<double[]> statistic, double level) {
    if (!(level > 0 && level < 1)) {
      throw new IllegalArgumentException("an interval's level is between 0 and 1, not " + level);
    }
    int n = groups.stream().mapToInt(g -> g.length).sum();
    if (n == 0) {
      throw new IllegalArgumentException("no values to bootstrap");
    }
    double[] all = new double[n];
    int at = 0;
    for (double[] g : groups) {
      System.arraycopy(g, 0, all, at, g.length);
      at += g.length;
    }
    Random random = new Random(SEED);
    double[] estimates = new double[RESAMPLES];
    double[] sample = new double[n];
    for (int k = 0; k < RESAMPLES; k++) {
      int i = 0;
      for (double[] g : groups) {
        for (int j = 0; j < g.length; j++) {
          sample[i++] = g[random.nextInt(g.length)];
        }
      }
      estimates[k] = statistic.applyAsDouble(sample);
    }
    Arrays.sort(estimates);
    double tail = (1 - level) / 2;
    return new Interval(statistic.applyAsDouble(all), Quantiles.ofSorted(estimates, tail), Quantiles.ofSorted(estimates, 1 - tail));
  }
}
