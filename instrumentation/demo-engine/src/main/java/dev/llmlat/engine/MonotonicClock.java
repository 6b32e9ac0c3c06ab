package dev.llmlat.engine;

import dev.llmlat.scheduler.SchedulerClock;

/**
 * Unix-ns timestamps from one wall-clock anchor plus {@link System#nanoTime()}: span durations then
 * equal the engine's measured sleeps, unaffected by wall-clock steps or millisecond granularity.
 */
final class MonotonicClock implements SchedulerClock {
  private final long anchorEpochNanos;
  private final long anchorNanoTime;

  MonotonicClock() {
    java.time.Instant now = java.time.Instant.now();
    this.anchorNanoTime = System.nanoTime();
    this.anchorEpochNanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  @Override
  public long now() {
    return epochNanosAt(System.nanoTime());
  }

  /** The Unix-ns time of a {@link System#nanoTime()} reading. */
  long epochNanosAt(long nanoTime) {
    return anchorEpochNanos + (nanoTime - anchorNanoTime);
  }
}
