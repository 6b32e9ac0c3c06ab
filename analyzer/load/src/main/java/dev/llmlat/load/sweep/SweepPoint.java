package dev.llmlat.load.sweep;

import dev.llmlat.load.LoadResult;
import dev.llmlat.load.ServingMetrics;
import java.util.Objects;

/**
 * One finished point of a sweep: its run, vLLM's figures for it, and its TTFT components where the
 * store had them.
 *
 * @param index the point's place in the sweep, from 0
 * @param level its rate (req/s) or clients
 * @param result what its run measured
 * @param metrics vLLM's benchmark figures of {@code result}
 * @param shares its TTFT components; null when the requests' spans did not reach a store
 */
public record SweepPoint(
    int index, double level, LoadResult result, ServingMetrics metrics, ComponentShares shares) {
  public SweepPoint {
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(metrics, "metrics");
    if (result.config().duration() == null) {
      throw new IllegalArgumentException("a sweep point runs for a duration");
    }
  }

  public static SweepPoint of(int index, double level, LoadResult result, ComponentShares shares) {
    return new SweepPoint(index, level, result, ServingMetrics.of(result), shares);
  }

  /** Requests sent per second of the point's duration: the load it offered. */
  public double offeredPerSecond() {
    return result.outcomes().size() / (result.config().duration().toNanos() / 1e9);
  }

  /** Goodput as a fraction of the finished requests; NaN without SLOs or without requests. */
  public double goodput() {
    return metrics.goodFraction() == null ? Double.NaN : metrics.goodFraction().proportion();
  }

  /**
   * Whether at least {@code target} of its requests met every SLO (a point that finished nothing
   * does not).
   */
  public boolean meets(double target) {
    return metrics.goodFraction() != null && metrics.goodFraction().proportion() >= target;
  }
}
