package dev.llmlat.load;

import dev.llmlat.stats.Means;
import dev.llmlat.stats.Quantiles;
import java.util.Arrays;

/**
 * One latency's distribution in milliseconds, as vLLM's benchmark reports it: mean, median,
 * population standard deviation ({@code np.std}), p90 and p99 (type-7 quantiles, numpy's default).
 * Without samples every figure is 0, as vLLM writes it ({@code np.mean(x or 0)}).
 *
 * @param samples how many values
 */
public record Latency(int samples, double mean, double median, double std, double p90, double p99) {
  /** The distribution of {@code ms}. */
  public static Latency of(double[] ms) {
    if (ms.length == 0) {
      return new Latency(0, 0, 0, 0, 0, 0);
    }
    double[] sorted = ms.clone();
    Arrays.sort(sorted);
    double mean = Means.of(sorted);
    double squares = 0;
    for (double v : sorted) {
      squares += (v - mean) * (v - mean);
    }
    return new Latency(
        sorted.length,
        mean,
        Quantiles.ofSorted(sorted, 0.5),
        Math.sqrt(squares / sorted.length),
        Quantiles.ofSorted(sorted, 0.9),
        Quantiles.ofSorted(sorted, 0.99));
  }
}
