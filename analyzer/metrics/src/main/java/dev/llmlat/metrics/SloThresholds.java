package dev.llmlat.metrics;

import java.time.Duration;
import java.util.Objects;

/**
 * The objectives {@code llmlat.slo.violations} counts against. A request violates the TTFT
 * objective when its TTFT is above it (as {@code llmlat report --slo-ttft} counts), and the TPOT
 * objective when its mean inter-token gap is above it (vLLM's goodput: a value equal to its
 * objective meets it).
 *
 * @param ttft the most time to first token
 * @param tpot the most time per output token after the first; null: none
 */
public record SloThresholds(Duration ttft, Duration tpot) {
  /** {@code llmlat report}'s default TTFT objective. */
  public static final Duration DEFAULT_TTFT = Duration.ofMillis(500);

  public SloThresholds {
    Objects.requireNonNull(ttft, "ttft");
    if (!ttft.isPositive()) {
      throw new IllegalArgumentException(
          "the TTFT objective must be above 0 ms, got " + ttft.toMillis() + " ms");
    }
    if (tpot != null && !tpot.isPositive()) {
      throw new IllegalArgumentException(
          "the TPOT objective must be above 0 ms, got " + tpot.toMillis() + " ms");
    }
  }

  public static SloThresholds ttftOnly(Duration ttft) {
    return new SloThresholds(ttft, null);
  }
}
