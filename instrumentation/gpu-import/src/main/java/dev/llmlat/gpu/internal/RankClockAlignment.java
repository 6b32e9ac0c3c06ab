package dev.llmlat.gpu.internal;

import java.util.Arrays;
import java.util.List;

/**
 * Per-rank clock offsets from the collectives themselves: a collective completes on all ranks at
 * once (no rank leaves before the last has contributed), so the ends of one collective are the same
 * instant. A clock domain's offset is the median, over matched collectives and its ranks, of the
 * reference rank's end minus the rank's end; the median shrugs off collectives whose ends do differ
 * (send/receive pairs, ranks outside the group). Ranks in the reference's domain get 0.
 */
public final class RankClockAlignment {
  private RankClockAlignment() {}

  /**
   * @param offsetNs per rank, added to its times to put them on rank 0's clock
   * @param evidence per rank, how many end differences its domain's offset rests on (0: none,
   *     offset 0)
   */
  public record Offsets(long[] offsetNs, int[] evidence) {}

  /**
   * @param domains per rank, its clock domain; rank 0 is the reference
   */
  public static Offsets estimate(int[] domains, List<StepCollectives.Collective> collectives) {
    int n = domains.length;
    long[] offsets = new long[n];
    int[] evidence = new int[n];
    if (n == 0) {
      return new Offsets(offsets, evidence);
    }
    for (int r = 0; r < n; r++) {
      int d = domains[r];
      if (d == domains[0] || evidence[r] > 0 || hasEarlier(domains, r)) {
        continue;
      }
      long[] diffs = new long[collectives.size() * n];
      int m = 0;
      for (StepCollectives.Collective c : collectives) {
        for (int q = 0; q < n; q++) {
          if (domains[q] == d) {
            diffs[m++] = c.endNs()[0] - c.endNs()[q];
          }
        }
      }
      long median = m == 0 ? 0 : median(Arrays.copyOf(diffs, m));
      for (int q = 0; q < n; q++) {
        if (domains[q] == d) {
          offsets[q] = median;
          evidence[q] = m;
        }
      }
    }
    for (int r = 0; r < n; r++) {
      if (domains[r] == domains[0]) {
        evidence[r] = collectives.size();
      }
    }
    return new Offsets(offsets, evidence);
  }

  private static boolean hasEarlier(int[] domains, int r) {
    for (int q = 0; q < r; q++) {
      if (domains[q] == domains[r]) {
        return true;
      }
    }
    return false;
  }

  /** The median; for an even count the mean of the middle two, rounded toward the lower. */
  static long median(long[] values) {
    Arrays.sort(values);
    int m = values.length;
    // b - a cannot overflow: both are differences of clock readings
    return m % 2 == 1 ? values[m / 2] : values[m / 2 - 1] + (values[m / 2] - values[m / 2 - 1]) / 2;
  }
}
