package dev.llmlat.ingest;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The store inserts, on a thread of their own, so that the consumer loop reads, decodes and encodes
 * the next batch while the store writes this one. At most one set of batches is in flight: the loop
 * takes its outcome ({@link #await()}) before it hands over the next, and only the loop commits
 * offsets (the consumer is the loop's alone). The metrics count the batches in flight and the time
 * the loop waited for the store.
 */
final class BackgroundInsert implements AutoCloseable {
  private final IngestMetrics metrics;
  private final ExecutorService thread =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "llmlat-ingest-insert");
            t.setDaemon(true); // an abandoned insert must not keep the process alive
            return t;
          });
  private List<SealedBatch> batches = new ArrayList<>();
  private Future<?> done; // null: nothing in flight

  BackgroundInsert(IngestMetrics metrics) {
    this.metrics = metrics;
  }

  /**
   * Starts inserting {@code sealed}, one batch after the other, with {@code insert}; nothing may be
   * in flight.
   */
  void start(List<SealedBatch> sealed, Consumer<SealedBatch> insert) {
    if (done != null) {
      throw new IllegalStateException("an insert is still in flight");
    }
    batches = new ArrayList<>(sealed);
    metrics.insertsInFlight.set(sealed.size());
    done =
        thread.submit(
            () -> {
              for (SealedBatch b : sealed) {
                insert.accept(b);
                metrics.insertsInFlight.decrementAndGet();
              }
            });
  }

  boolean inFlight() {
    return done != null;
  }

  /**
   * Whether the store can take a batch now: nothing in flight, or what is has ended ({@link
   * #await()} would not wait).
   */
  boolean idle() {
    return done == null || done.isDone();
  }

  /**
   * Waits for the insert in flight and returns its batches, those of partitions {@linkplain #forget
   * forgotten} meanwhile left out (nothing when nothing was in flight); an insert that failed
   * throws its failure here.
   */
  List<SealedBatch> await() {
    if (done == null) {
      return List.of();
    }
    Future<?> f = done;
    List<SealedBatch> written = batches;
    done = null;
    batches = new ArrayList<>();
    long t0 = System.nanoTime();
    try {
      f.get();
    } catch (ExecutionException e) {
      switch (e.getCause()) {
        case RuntimeException r -> throw r;
        case Error err -> throw err;
        default -> throw new IllegalStateException(e.getCause());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the store's insert", e);
    } finally {
      metrics.insertsInFlight.set(0);
      metrics.storeWaitNanos.addAndGet(System.nanoTime() - t0);
    }
    return written;
  }

  /**
   * Leaves the batches of {@code partitions} (no longer this ingester's) out of what {@link
   * #await()} returns.
   */
  void forget(Collection<TopicPartition> partitions) {
    batches.removeIf(b -> partitions.contains(b.partition()));
  }

  /** Waits for the insert in flight however it ends (the loop is failing; nothing is committed). */
  void abandon() {
    try {
      await();
    } catch (RuntimeException | Error ignored) {
      // the loop's own failure is the one reported; the batch is replayed from its intent
    }
  }

  @Override
  public void close() {
    thread.shutdown();
  }
}
