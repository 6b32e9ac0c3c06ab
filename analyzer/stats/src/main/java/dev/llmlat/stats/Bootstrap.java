package dev.llmlat.stats;

import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.ToDoubleFunction;
import java.util.stream.IntStream;

/**
 * Percentile bootstrap intervals: the statistic recomputed on samples drawn with replacement, and
 * the middle 95% (or another level) of what it came out as. The seed is fixed, so the same data
 * always give the same interval.
 */
public final class Bootstrap {
  /** The resamples every interval here takes. */
  public static final int RESAMPLES = 2000;

  private static final long SEED = 42;

  /**
   * Resamples drawn in one task of {@link #difference(double[][], double[][], double[], double)}.
   */
  private static final int CHUNK = 100;

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
  public static Interval stratified(
      List<double[]> groups, ToDoubleFunction<double[]> statistic, double level) {
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
    return new Interval(
        statistic.applyAsDouble(all),
        Quantiles.ofSorted(estimates, tail),
        Quantiles.ofSorted(estimates, 1 - tail));
  }

  /** Intervals of B − A for one column: of each quantile asked, in order, and of the mean. */
  public record Difference(List<Interval> quantiles, Interval mean) {
    public Difference {
      quantiles = List.copyOf(quantiles);
    }
  }

  /** {@link #difference(double[][], double[][], double[], double)} of one column, at 95%. */
  public static Difference difference(double[] a, double[] b, double[] quantiles) {
    return difference(new double[][] {a}, new double[][] {b}, quantiles, 0.95)[0];
  }

  /**
   * The {@code level} intervals of B − A of the {@code quantiles} (0 to 1, type 7 as {@link
   * Quantiles}) and of the mean of every column, for two independent samples of rows ({@code
   * a[column][row]}, a side's rows being its requests, say before and after a deploy). Each
   * resample draws the rows of each side with replacement, independently of the other side, and
   * whole: a request's columns stay together, so means of columns that add up row by row add up in
   * every resample too.
   */
  public static Difference[] difference(
      double[][] a, double[][] b, double[] quantiles, double level) {
    if (!(level > 0 && level < 1)) {
      throw new IllegalArgumentException("an interval's level is between 0 and 1, not " + level);
    }
    if (a.length != b.length) {
      throw new IllegalArgumentException(
          "both sides need the same columns, got " + a.length + " and " + b.length);
    }
    ResampledColumns sa = new ResampledColumns(a, "A", quantiles);
    ResampledColumns sb = new ResampledColumns(b, "B", quantiles);
    int columns = a.length;
    int statistics = quantiles.length + 1;
    double[][][] estimates = new double[columns][statistics][RESAMPLES];
    // Chunks of resamples run in parallel, each on its own random stream split off the seed in
    // order: the chunks, not the threads, fix which rows every resample draws.
    SplittableRandom seed = new SplittableRandom(SEED);
    SplittableRandom[] streams = new SplittableRandom[RESAMPLES / CHUNK];
    for (int i = 0; i < streams.length; i++) {
      streams[i] = seed.split();
    }
    IntStream.range(0, streams.length)
        .parallel()
        .forEach(
            chunk -> {
              SplittableRandom random = streams[chunk];
              char[] countsA = new char[sa.rows()];
              char[] countsB = new char[sb.rows()];
              double[] statsA = new double[statistics];
              double[] statsB = new double[statistics];
              for (int k = chunk * CHUNK; k < (chunk + 1) * CHUNK; k++) {
                draw(random, countsA);
                draw(random, countsB);
                for (int c = 0; c < columns; c++) {
                  sa.statistics(c, countsA, statsA);
                  sb.statistics(c, countsB, statsB);
                  for (int s = 0; s < statistics; s++) {
                    estimates[c][s][k] = statsB[s] - statsA[s];
                  }
                }
              }
            });
    double tail = (1 - level) / 2;
    Difference[] out = new Difference[columns];
    for (int c = 0; c < columns; c++) {
      Interval[] intervals = new Interval[statistics];
      for (int s = 0; s < statistics; s++) {
        double[] e = estimates[c][s];
        Arrays.sort(e);
        double estimate =
            s < quantiles.length
                ? Quantiles.ofSorted(sb.sorted(c), quantiles[s])
                    - Quantiles.ofSorted(sa.sorted(c), quantiles[s])
                : Means.of(sb.sorted(c)) - Means.of(sa.sorted(c));
        intervals[s] =
            new Interval(estimate, Quantiles.ofSorted(e, tail), Quantiles.ofSorted(e, 1 - tail));
      }
      out[c] =
          new Difference(
              Arrays.asList(intervals).subList(0, quantiles.length), intervals[quantiles.length]);
    }
    return out;
  }

  /**
   * How often each row is drawn into one resample of {@code counts.length} rows. 16 bits a count
   * keep the counts of 100k rows in a core's cache, where the walks over sorted values read them in
   * random order; a row drawn 65536 times would need a sample of more rows and odds below
   * 10^-100000.
   */
  private static void draw(SplittableRandom random, char[] counts) {
    Arrays.fill(counts, (char) 0);
    for (int i = 0; i < counts.length; i++) {
      counts[random.nextInt(counts.length)]++;
    }
  }
}
