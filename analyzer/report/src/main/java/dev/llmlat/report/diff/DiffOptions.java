package dev.llmlat.report.diff;

import java.util.List;

/**
 * How two samples are compared: the percentiles (of 100) beside the mean, and the noise floor under
 * which a change is not called one even when its interval leaves 0 out: the larger of {@code
 * noiseFloorNs} and {@code noiseFloorRelative} of side A's value.
 */
public record DiffOptions(List<Double> percentiles, long noiseFloorNs, double noiseFloorRelative) {
  /**
   * Requests that lie above a percentile at the least, on each side: see {@link #requiredRequests}.
   */
  public static final int TAIL_REQUESTS = 10;

  public DiffOptions {
    percentiles = List.copyOf(percentiles);
    if (percentiles.isEmpty()) {
      throw new IllegalArgumentException("name at least one percentile (e.g. 50,90,99)");
    }
    double last = 0;
    for (double p : percentiles) {
      if (!(p > 0 && p < 100)) {
        throw new IllegalArgumentException(
            "a percentile is between 0 and 100 (exclusive), not " + p);
      }
      if (p <= last) {
        throw new IllegalArgumentException("percentiles go up, each once: " + percentiles);
      }
      last = p;
    }
    if (noiseFloorNs < 0) {
      throw new IllegalArgumentException(
          "the noise floor is 0 or more, not " + noiseFloorNs / 1e6 + " ms");
    }
    if (!(noiseFloorRelative >= 0 && noiseFloorRelative < 1)) {
      throw new IllegalArgumentException(
          "the relative noise floor is a share of side A's value from 0 to under 1 (100%), not "
              + noiseFloorRelative);
    }
  }

  /** p50, p90, p99; a floor of 1 ms or 1% of side A's value. */
  public static DiffOptions defaults() {
    return new DiffOptions(List.of(50d, 90d, 99d), 1_000_000L, 0.01);
  }

  /**
   * The requests each side needs for percentile {@code p}: enough that {@value #TAIL_REQUESTS} lie
   * above it ({@code 10 / (1 - p/100)}: p50 20, p90 100, p99 1000). With fewer, the percentile is
   * one of a handful of the slowest requests, and its bootstrap interval (resampling those few
   * again and again) says more about them than about the deploy.
   */
  public static int requiredRequests(double p) {
    // 100 - p in percent keeps p99's 1000 exact (10 / (1 - 0.99) is 1000.0000000000009 in doubles)
    return (int) Math.ceil(TAIL_REQUESTS * 100 / (100 - p) - 1e-9);
  }

  /** The requests each side needs for every percentile asked. */
  public int requiredRequests() {
    return requiredRequests(percentiles.get(percentiles.size() - 1));
  }

  /** The floor for a statistic whose side-A value is {@code aNs}. */
  double floorNs(double aNs) {
    return Math.max(noiseFloorNs, noiseFloorRelative * Math.abs(aNs));
  }

  /** "p90", "p99.9". */
  static String name(double percentile) {
    return percentile == Math.rint(percentile) ? "p" + (long) percentile : "p" + percentile;
  }
}
