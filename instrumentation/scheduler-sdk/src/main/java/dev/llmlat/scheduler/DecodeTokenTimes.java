package dev.llmlat.scheduler;

import java.util.ArrayList;
import java.util.List;

/**
 * The compact form of a request's decode token times on its {@code decode} span ({@code
 * llmlat.decode.token_deltas_ns}): element 0 is the first decode token's time minus the decode
 * span's start (the first token, which ends prefill), element i the gap between decode tokens i-1
 * and i. Deltas stay small, so the OTLP varints stay short (3-4 bytes a token instead of a span per
 * token), and the inter-token latencies are the array itself.
 */
public final class DecodeTokenTimes {
  private DecodeTokenTimes() {}

  /** Deltas of absolute token times (Unix ns, non-decreasing) from {@code startNanos}. */
  public static List<Long> encode(long startNanos, long[] tokenTimes, int count) {
    List<Long> deltas = new ArrayList<>(count);
    long previous = startNanos;
    for (int i = 0; i < count; i++) {
      long t = tokenTimes[i];
      if (t < previous) {
        throw new IllegalArgumentException(
            "token times must not go backwards: " + t + " after " + previous);
      }
      deltas.add(t - previous);
      previous = t;
    }
    return deltas;
  }

  /** The absolute token times (Unix ns) back from the span start and its deltas. */
  public static long[] decode(long startNanos, List<Long> deltas) {
    long[] times = new long[deltas.size()];
    long t = startNanos;
    for (int i = 0; i < times.length; i++) {
      t += deltas.get(i);
      times[i] = t;
    }
    return times;
  }
}
