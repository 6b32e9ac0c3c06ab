package dev.llmlat.load;

import java.util.Random;

/**
 * When an open-loop run sends its requests: the i-th request's offset from the start of the
 * measured phase, in nanoseconds. The first request goes at 0. Constant: {@code i / rate}, computed
 * from i so rounding never accumulates. Poisson: the sum of exponential gaps with mean {@code
 * 1/rate} (inverse transform of a seeded uniform), not rescaled afterwards: the process stays
 * Poisson.
 */
final class ArrivalTimes {
  private final double nanosPerRequest;
  private final Random poisson; // null: constant
  private long index;
  private double offset;

  private ArrivalTimes(double rate, Random poisson) {
    this.nanosPerRequest = 1e9 / rate;
    this.poisson = poisson;
  }

  /** The schedule of an open-loop shape; a closed loop has none. */
  static ArrivalTimes of(LoadShape shape) {
    return switch (shape) {
      case LoadShape.Constant c -> new ArrivalTimes(c.rate(), null);
      case LoadShape.Poisson p -> new ArrivalTimes(p.rate(), new Random(p.seed()));
      case LoadShape.Closed c ->
          throw new IllegalArgumentException("a closed loop has no arrival schedule");
    };
  }

  /** The next request's offset in nanoseconds from the phase's start. */
  long next() {
    long i = index++;
    if (i == 0) {
      return 0;
    }
    if (poisson == null) {
      return Math.round(i * nanosPerRequest);
    }
    // 1 - U is in (0, 1]: the logarithm is finite
    offset += -Math.log(1 - poisson.nextDouble()) * nanosPerRequest;
    return Math.round(offset);
  }
}
