package dev.llmlat.load;

import java.util.Locale;

/**
 * How requests arrive: open loop at a rate (constant or Poisson), or a closed loop of N clients.
 */
public sealed interface LoadShape {
  /**
   * Requests per second at a constant interval (vLLM: {@code --request-rate R --burstiness inf}).
   */
  record Constant(double rate) implements LoadShape {
    public Constant {
      checkRate(rate);
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%s req/s, constant", format(rate));
    }
  }

  /**
   * A Poisson process: exponential gaps with mean {@code 1/rate}, from a seeded generator (vLLM:
   * {@code --request-rate R}, burstiness 1).
   */
  record Poisson(double rate, long seed) implements LoadShape {
    public Poisson {
      checkRate(rate);
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%s req/s, Poisson (seed %d)", format(rate), seed);
    }
  }

  /** {@code concurrency} clients, each sending its next request when its last one ended. */
  record Closed(int concurrency) implements LoadShape {
    public Closed {
      if (concurrency < 1) {
        throw new IllegalArgumentException("--concurrency must be at least 1, not " + concurrency);
      }
    }

    @Override
    public String toString() {
      return "closed loop of " + concurrency + " clients";
    }
  }

  private static void checkRate(double rate) {
    // above a million a second the gap is under a microsecond: nothing could send that fast
    if (!(rate > 0) || rate > 1_000_000) {
      throw new IllegalArgumentException(
          "--rate must be above 0 and at most 1000000 requests per second, not " + rate);
    }
  }

  /** Rates as people write them: {@code 4}, {@code 2.5}. */
  private static String format(double rate) {
    return rate == Math.rint(rate) ? Long.toString((long) rate) : Double.toString(rate);
  }
}
