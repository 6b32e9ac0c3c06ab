package dev.llmlat.bench;

import dev.llmlat.stats.Bootstrap;
import dev.llmlat.stats.Quantiles;
import java.util.List;

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
  /**
   * @param runs per run, its rounds' ratios; at least one ratio in all
   */
  public static PairedRatio of(List<double[]> runs) {
    if (runs.stream().mapToInt(r -> r.length).sum() == 0) {
      throw new IllegalArgumentException("no rounds to take the median of");
    }
    Bootstrap.Interval interval = Bootstrap.stratified(runs, Quantiles::median, 0.95);
    return new PairedRatio(interval.estimate(), interval.low(), interval.high());
  }

  /** "+1.2% [-0.8%, +3.1%]": the ratios as changes. */
  public String asChange() {
    return String.format(
        java.util.Locale.ROOT,
        "%+.1f%% [%+.1f%%, %+.1f%%]",
        100 * (median - 1),
        100 * (low - 1),
        100 * (high - 1));
  }
}
