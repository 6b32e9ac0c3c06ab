package dev.llmlat.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The median of per-round ratios (one gateway's p50 over another's in the same round) and a 95%
 * bootstrap interval of that median. Rounds are resampled within each run they came from, so
 * several runs of a benchmark can be taken together without treating their differences as noise.
 * The seed is fixed: the same rounds always give the same interval.
 *
 * @param median the median of all ratios
 * @param low the interval's lower end
 * @param high the interval's upper end
 */
public record PairedRatio(double median, double low, double high) {
  private static final int RESAMPLES = 2000;

  /** @param runs per run, its rounds' ratios; at least one ratio in all */
  public static PairedRatio of(List<double[]> runs) {
    int n = runs.stream().mapToInt(r -> r.length).sum();
    if (n == 0) {
      throw new IllegalArgumentException("no rounds to take the median of");
    }
    double[] all = new double[n];
    int at = 0;
    for (double[] r : runs) {
      System.arraycopy(r, 0, all, at, r.length);
      at += r.length;
    }
    Random random = new Random(42);
    double[] medians = new double[RESAMPLES];
    double[] resample = new double[n];
    for (int k = 0; k < RESAMPLES; k++) {
      int i = 0;
      for (double[] r : runs) {
        for (int j = 0; j < r.length; j++) {
          resample[i++] = r[random.nextInt(r.length)];
        }
      }
      medians[k] = median(resample);
    }
    Arrays.sort(medians);
    return new PairedRatio(median(all), medians[(int) (0.025 * RESAMPLES)], medians[(int) (0.975 * RESAMPLES) - 1]);
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  /** "+1.2% [-0.8%, +3.1%]": the ratios as changes. */
  public String asChange() {
    return String.format(java.util.Locale.ROOT, "%+.1f%% [%+.1f%%, %+.1f%%]", 100 * (median - 1), 100 * (low - 1),
        100 * (high - 1));
  }
}
