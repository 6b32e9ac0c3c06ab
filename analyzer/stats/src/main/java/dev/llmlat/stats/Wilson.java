package dev.llmlat.stats;

/**
 * The Wilson score interval of a proportion (successes out of trials): unlike the normal
 * approximation it stays inside [0, 1] and behaves at 0 and at all successes, as goodput does.
 */
public final class Wilson {
  private static final double Z95 = 1.959963984540054;

  private Wilson() {}

  /** A proportion with its 95% interval. */
  public record Interval(double proportion, double low, double high) {}

  public static Interval of95(long successes, long trials) {
    if (trials <= 0 || successes < 0 || successes > trials) {
      throw new IllegalArgumentException(
          "need 0 <= successes <= trials and trials > 0, got " + successes + " of " + trials);
    }
    double n = trials;
    double p = successes / n;
    double z2 = Z95 * Z95;
    double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
    double half = Z95 * Math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return new Interval(p, Math.max(0, centre - half), Math.min(1, centre + half));
  }
}
