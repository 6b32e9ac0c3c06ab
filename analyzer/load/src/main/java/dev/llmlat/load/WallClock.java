package dev.llmlat.load;

import java.time.Instant;

/**
 * Unix time for {@link System#nanoTime()} readings: the wall clock is read once and the monotonic
 * clock carries it, so intervals between a request's events are exact and never jump with NTP.
 */
public final class WallClock {
  private final long anchorUnixNanos;
  private final long anchorNanoTime;

  public WallClock() {
    Instant now = Instant.now();
    this.anchorNanoTime = System.nanoTime();
    this.anchorUnixNanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** The Unix time in nanoseconds of the {@code nanoTime} reading. */
  public long unixNanos(long nanoTime) {
    return anchorUnixNanos + (nanoTime - anchorNanoTime);
  }
}
