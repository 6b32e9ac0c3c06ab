package dev.llmlat.ingest;

import java.util.concurrent.atomic.AtomicLong;

/** The ingester's counters, readable from any thread. */
public final class IngestMetrics {
  final AtomicLong records = new AtomicLong();
  final AtomicLong spans = new AtomicLong();
  final AtomicLong kernels = new AtomicLong();
  final AtomicLong deadLettered = new AtomicLong();
  final AtomicLong batches = new AtomicLong();
  final AtomicLong insertRetries = new AtomicLong();
  final AtomicLong pendingSpans = new AtomicLong();
  final AtomicLong replayedBatches = new AtomicLong();

  /**
   * Spans of imported files the store already held from an import straight into it: not stored
   * again.
   */
  final AtomicLong importSpansSkipped = new AtomicLong();

  /**
   * Batches handed to the store's insert and not yet in (at most one set at a time: the loop waits
   * for it).
   */
  final AtomicLong insertsInFlight = new AtomicLong();

  /**
   * How long the consumer loop waited for the store to finish an insert before it could hand over
   * the next.
   */
  final AtomicLong storeWaitNanos = new AtomicLong();

  volatile long lag = -1;

  /** A consistent-enough copy for reports and tests. */
  public record Snapshot(
      long records,
      long spans,
      long kernels,
      long deadLettered,
      long batches,
      long insertRetries,
      long pendingSpans,
      long replayedBatches,
      long lag,
      long importSpansSkipped,
      long insertsInFlight,
      long storeWaitMillis) {}

  public Snapshot snapshot() {
    return new Snapshot(
        records.get(),
        spans.get(),
        kernels.get(),
        deadLettered.get(),
        batches.get(),
        insertRetries.get(),
        pendingSpans.get(),
        replayedBatches.get(),
        lag,
        importSpansSkipped.get(),
        insertsInFlight.get(),
        storeWaitNanos.get() / 1_000_000);
  }
}
