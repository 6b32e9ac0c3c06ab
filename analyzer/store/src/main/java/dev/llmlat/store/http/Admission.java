package dev.llmlat.store.http;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Turns for the engine: a bounded number of queries run at once, a bounded number wait (in arrival
 * order) for a turn, and the rest are refused at once, so a burst is answered quickly with a 503
 * instead of piling up behind a long query.
 */
final class Admission {
  private final Semaphore running;
  private final int maxRunning;
  private final int maxWaiting;
  private final Duration timeout;
  private final AtomicInteger waiting = new AtomicInteger();

  Admission(int maxRunning, int maxWaiting, Duration timeout) {
    this.running = new Semaphore(maxRunning, true);
    this.maxRunning = maxRunning;
    this.maxWaiting = maxWaiting;
    this.timeout = timeout;
  }

  /** Takes a turn, or answers the error to send instead. */
  ClickHouseError enter() throws InterruptedException {
    if (running.tryAcquire()) {
      return null;
    }
    if (waiting.incrementAndGet() > maxWaiting) {
      waiting.decrementAndGet();
      return saturated("and " + maxWaiting + " waiting");
    }
    try {
      if (running.tryAcquire(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        return null;
      }
      return saturated("for " + timeout.toSeconds() + " s");
    } finally {
      waiting.decrementAndGet();
    }
  }

  void leave() {
    running.release();
  }

  private ClickHouseError saturated(String detail) {
    return ClickHouseError.of(
        ClickHouseError.TOO_MANY_SIMULTANEOUS_QUERIES,
        "Too many simultaneous queries. Maximum: "
            + maxRunning
            + " running "
            + detail
            + "; retry later");
  }
}
