package dev.llmlat.scheduler;

import java.time.Instant;

/**
 * Where the tracer reads the time of calls that pass no timestamp: Unix epoch nanoseconds. An
 * interface of the SDK's own, so engines need only the OpenTelemetry API.
 */
@FunctionalInterface
public interface SchedulerClock {
  /** Now, in Unix epoch nanoseconds. */
  long now();

  /**
   * One wall-clock reading at creation plus {@link System#nanoTime()} since: durations between
   * readings are exact and immune to wall-clock steps, which matters more to latency attribution
   * than the wall clock's drift over a process's life.
   */
  static SchedulerClock monotonic() {
    Instant anchor = Instant.now();
    long anchorNanoTime = System.nanoTime();
    long anchorEpochNanos = anchor.getEpochSecond() * 1_000_000_000L + anchor.getNano();
    return () -> anchorEpochNanos + (System.nanoTime() - anchorNanoTime);
  }
}
