package dev.llmlat.ingest;

import dev.llmlat.store.StoreException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingester's calls on the store, retried with backoff (200 ms doubling to 10 s) while the store
 * is away. The consumer loop reads on until the next batch is full, then waits, so memory stays at
 * two batches (the one being written and the next) however long that is. Once the ingester is
 * stopping a call gives up after its third attempt.
 */
final class StoreRetry {
  private static final Logger LOG = LoggerFactory.getLogger(StoreRetry.class);

  private final String storeDescription;
  private final IngestMetrics metrics;
  private final BooleanSupplier running;

  /**
   * {@code running}: whether the ingester still runs (else a call gives up after three attempts).
   */
  StoreRetry(String storeDescription, IngestMetrics metrics, BooleanSupplier running) {
    this.storeDescription = storeDescription;
    this.metrics = metrics;
    this.running = running;
  }

  /** Runs {@code action} on the store until it succeeds. */
  <T> T call(String what, Supplier<T> action) {
    long backoffMs = 200;
    for (int attempt = 1; ; attempt++) {
      try {
        return action.get();
      } catch (StoreException e) {
        if (!running.getAsBoolean() && attempt >= 3) {
          throw e;
        }
        metrics.insertRetries.incrementAndGet();
        Runtime rt = Runtime.getRuntime();
        LOG.warn(
            "{} into {} failed (attempt {}), retrying in {} ms; not consuming, holding {} spans, heap {} MB: {}",
            what,
            storeDescription,
            attempt,
            backoffMs,
            metrics.pendingSpans.get(),
            (rt.totalMemory() - rt.freeMemory()) >> 20,
            e.getMessage().lines().findFirst().orElse(""));
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        backoffMs = Math.min(backoffMs * 2, 10_000);
      }
    }
  }

  void run(String what, Runnable action) {
    call(
        what,
        () -> {
          action.run();
          return null;
        });
  }
}
