package dev.llmlat.bench;

import java.util.List;

/**
 * Whether a process's live heap stayed flat over a run: the least-squares line through (minute, MB)
 * samples taken after warm-up. Memory grew when that line rises, across the samples' span, by more
 * than {@link #TOLERANCE_MB} or {@link #TOLERANCE_SHARE} of the first sample, whichever is larger:
 * a batch in flight moves single samples by a few MB, a leak moves the line.
 *
 * @param slopeMbPerMinute the fitted line's slope
 * @param riseMb the fitted rise from the first to the last sample
 * @param allowedMb the rise the rule tolerates for this run
 */
public record HeapTrend(double slopeMbPerMinute, double riseMb, double allowedMb) {
  public static final double TOLERANCE_MB = 8;
  public static final double TOLERANCE_SHARE = 0.10;
  public static final String RULE =
      "flat = the least-squares line of live heap (after a full GC) over the samples after"
          + " warm-up rises by at most max("
          + (int) TOLERANCE_MB
          + " MB, "
          + (int) (TOLERANCE_SHARE * 100)
          + "% of the first sample)";

  /** A sample: minutes since the start, MB of live heap. */
  public record Point(double minute, double mb) {}

  public static HeapTrend of(List<Point> points) {
    if (points.size() < 2) {
      throw new IllegalArgumentException(
          "a heap trend needs at least 2 samples after warm-up, got "
              + points.size()
              + ": run longer or sample more often");
    }
    double n = points.size();
    double mx = points.stream().mapToDouble(Point::minute).sum() / n;
    double my = points.stream().mapToDouble(Point::mb).sum() / n;
    double sxy = 0;
    double sxx = 0;
    for (Point p : points) {
      sxy += (p.minute() - mx) * (p.mb() - my);
      sxx += (p.minute() - mx) * (p.minute() - mx);
    }
    double slope = sxx == 0 ? 0 : sxy / sxx;
    double span = points.get(points.size() - 1).minute() - points.get(0).minute();
    return new HeapTrend(
        slope, slope * span, Math.max(TOLERANCE_MB, TOLERANCE_SHARE * points.get(0).mb()));
  }

  public boolean flat() {
    return riseMb <= allowedMb;
  }
}
