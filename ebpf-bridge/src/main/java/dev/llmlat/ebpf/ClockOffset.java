package dev.llmlat.ebpf;

import java.time.Instant;

/**
 * Turns bpftrace {@code nsecs} (CLOCK_MONOTONIC) into Unix ns. {@link System#nanoTime()} reads the
 * same clock on Linux, so the offset is one realtime reading bracketed by two monotonic ones; the
 * tightest bracket of a few tries wins. Re-measured periodically because NTP steps and slews move
 * realtime but not monotonic.
 *
 * @param offsetNs Unix ns minus monotonic ns
 * @param uncertaintyNs half the bracket: how far off the offset may be
 */
public record ClockOffset(long offsetNs, long uncertaintyNs) {
  /** How the span timestamps were made (attribute {@code llmlat.clock.rule}). */
  public static final String RULE =
      "ebpf:nsecs(CLOCK_MONOTONIC)+offset(realtime-monotonic, measured at start, re-checked)";

  public static ClockOffset measure() {
    long best = Long.MAX_VALUE;
    long offset = 0;
    for (int i = 0; i < 7; i++) {
      long before = System.nanoTime();
      Instant now = Instant.now();
      long after = System.nanoTime();
      if (after - before < best) {
        best = after - before;
        long unix = now.getEpochSecond() * 1_000_000_000L + now.getNano();
        offset = unix - (before + (after - before) / 2);
      }
    }
    return new ClockOffset(offset, best / 2);
  }

  public long toUnixNanos(long monotonicNs) {
    return monotonicNs + offsetNs;
  }
}
