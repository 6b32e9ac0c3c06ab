package dev.llmlat.stats;

import java.util.Arrays;

/**
 * Quantiles with one definition everywhere llmlat computes them in Java: linear interpolation
 * between the closest ranks (Hyndman and Fan's type 7, numpy's {@code percentile} default, which
 * vLLM's benchmark reports), so a p99 here means what it means in the tools users compare with.
 */
public final class Quantiles {
  private Quantiles() {}

  /** The {@code q}-quantile (0..1) of values sorted ascending; NaN when there are none. */
  public static double ofSorted(double[] sorted, double q) {
    checkQ(q);
    int n = sorted.length;
    if (n == 0) {
      return Double.NaN;
    }
    double h = (n - 1) * q;
    int lo = (int) Math.floor(h);
    int hi = Math.min(n - 1, lo + 1);
    return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
  }

  /**
   * As {@link #ofSorted(double[], double)} for integer values (nanoseconds); NaN when there are
   * none.
   */
  public static double ofSorted(long[] sorted, double q) {
    checkQ(q);
    int n = sorted.length;
    if (n == 0) {
      return Double.NaN;
    }
    double h = (n - 1) * q;
    int lo = (int) Math.floor(h);
    int hi = Math.min(n - 1, lo + 1);
    return sorted[lo] + (h - lo) * (double) (sorted[hi] - sorted[lo]);
  }

  /** The {@code q}-quantile of values in any order (sorts a copy); NaN when there are none. */
  public static double of(double[] values, double q) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return ofSorted(sorted, q);
  }

  /** The median of values in any order; NaN when there are none. */
  public static double median(double[] values) {
    return of(values, 0.5);
  }

  private static void checkQ(double q) {
    if (!(q >= 0 && q <= 1)) {
      throw new IllegalArgumentException("a quantile is between 0 and 1, not " + q);
    }
  }
}
