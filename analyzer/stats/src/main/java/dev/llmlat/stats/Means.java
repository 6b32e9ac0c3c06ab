package dev.llmlat.stats;

/**
 * The arithmetic mean with one definition: summed with Neumaier's compensation, because a million
 * nanosecond durations sum past 2^53, where plain double addition starts to drop nanoseconds.
 */
public final class Means {
  private Means() {}

  /** The mean of the values; NaN when there are none. */
  public static double of(double[] values) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double sum = 0;
    double compensation = 0;
    for (double v : values) {
      double t = sum + v;
      compensation += Math.abs(sum) >= Math.abs(v) ? (sum - t) + v : (v - t) + sum;
      sum = t;
    }
    return (sum + compensation) / values.length;
  }
}
