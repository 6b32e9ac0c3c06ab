package dev.llmlat.live.internal;

import dev.llmlat.stats.Quantiles;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live attributor's counters and gauges, written by its stream threads, readable from any
 * thread.
 */
public final class LiveMetrics {
  public final AtomicLong records = new AtomicLong();
  public final AtomicLong undecodable = new AtomicLong();
  public final AtomicLong spans = new AtomicLong();

  /** Traces attributed (a trace attributed again after a late span counts again). */
  public final AtomicLong attributions = new AtomicLong();

  public final AtomicLong lateReattributions = new AtomicLong();
  public final AtomicLong rowsWritten = new AtomicLong();
  public final AtomicLong storeFailures = new AtomicLong();

  /** Traces dropped at the end of their retention without ever holding a request. */
  public final AtomicLong expiredWithoutRequest = new AtomicLong();

  /** Traces the attribution core failed on (logged with the error; no row). */
  public final AtomicLong failedTraces = new AtomicLong();

  public volatile long lag = -1;
  private final Set<TraceAssembler> assemblers = ConcurrentHashMap.newKeySet();

  /**
   * Milliseconds from a trace's last span to its row, since the last {@link #drainDelays}; bounded.
   */
  private final ConcurrentLinkedQueue<Long> delays = new ConcurrentLinkedQueue<>();

  private final AtomicLong delayCount = new AtomicLong();
  private static final int MAX_DELAYS = 100_000;

  void register(TraceAssembler a) {
    assemblers.add(a);
  }

  void unregister(TraceAssembler a) {
    assemblers.remove(a);
  }

  void delay(long ms) {
    if (delayCount.incrementAndGet()
        <= MAX_DELAYS) { // a reservoir of the first ones per report: enough for p99
      delays.add(ms);
    }
  }

  /**
   * Traces that have a request and wait for their grace to pass (or for the store), over this
   * process's tasks.
   */
  public long waiting() {
    return assemblers.stream().mapToLong(TraceAssembler::waiting).sum();
  }

  /**
   * Traces held in this process's state (waiting, attributed and kept for late spans, or without a
   * request yet).
   */
  public long held() {
    return assemblers.stream().mapToLong(TraceAssembler::held).sum();
  }

  /** Delay quantiles (p50, p99 in ms) since the last call, and how many; NaN when none. */
  public double[] drainDelays() {
    delayCount.set(0);
    long[] ms = new long[Math.min(MAX_DELAYS, delays.size())];
    int n = 0;
    for (Long d; n < ms.length && (d = delays.poll()) != null; ) {
      ms[n++] = d;
    }
    delays.clear();
    if (n == 0) {
      return new double[] {Double.NaN, Double.NaN, 0};
    }
    long[] sorted = java.util.Arrays.copyOf(ms, n);
    java.util.Arrays.sort(sorted);
    return new double[] {Quantiles.ofSorted(sorted, 0.5), Quantiles.ofSorted(sorted, 0.99), n};
  }

  /** A consistent-enough copy for reports and tests. */
  public dev.llmlat.live.LiveStats snapshot() {
    return new dev.llmlat.live.LiveStats(
        records.get(),
        undecodable.get(),
        spans.get(),
        waiting(),
        held(),
        attributions.get(),
        lateReattributions.get(),
        rowsWritten.get(),
        storeFailures.get(),
        expiredWithoutRequest.get(),
        failedTraces.get(),
        lag);
  }
}
