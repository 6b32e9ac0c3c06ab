package dev.llmlat.load;

import java.time.Duration;

/**
 * Service-level objectives for goodput: a request is good when it succeeded and met every SLO given
 * (vLLM's {@code --goodput ttft:MS tpot:MS}).
 *
 * @param ttft the most time to first token; null: none
 * @param tpot the most time per output token after the first; null: none
 */
public record Slo(Duration ttft, Duration tpot) {
  public Slo {
    if (ttft != null && (ttft.isNegative() || ttft.isZero())) {
      throw new IllegalArgumentException("--slo-ttft must be above 0 ms");
    }
    if (tpot != null && (tpot.isNegative() || tpot.isZero())) {
      throw new IllegalArgumentException("--slo-tpot must be above 0 ms");
    }
  }

  public static Slo none() {
    return new Slo(null, null);
  }

  /**
   * An SLO of {@code ms} milliseconds (fractions kept to the nanosecond); null for null.
   *
   * @param option what named it, for the message ({@code --slo-ttft})
   */
  public static Duration millis(Double ms, String option) {
    if (ms == null) {
      return null;
    }
    if (!Double.isFinite(ms) || ms <= 0 || ms > 86_400_000) {
      throw new IllegalArgumentException(
          option + " must be above 0 ms and at most a day, not " + ms);
    }
    return Duration.ofNanos(Math.round(ms * 1e6));
  }

  public boolean any() {
    return ttft != null || tpot != null;
  }

  /** Whether {@code r} succeeded and met every SLO (vLLM: a value equal to its SLO meets it). */
  public boolean met(RequestOutcome r) {
    return r.success()
        && (ttft == null || r.ttftNanos() <= ttft.toNanos())
        && (tpot == null || r.tpotNanos() <= tpot.toNanos());
  }
}
