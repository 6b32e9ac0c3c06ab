package dev.llmlat.ebpf;

import java.time.Duration;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * Puts probe events back in time order. bpftrace's per-CPU buffers deliver events out of order
 * across CPUs, so events wait here for {@code window}: one older than that (on the monotonic clock
 * bpftrace and {@link System#nanoTime()} share) cannot be overtaken any more and is released. A
 * synchronisation is ordered by its end, when its record was written; events of one time keep their
 * arrival order. Bounded by time, not count: the reader's queue in front of it bounds what arrives.
 * Not thread-safe: one caller feeds it.
 */
final class ReorderBuffer {
  private record Queued(long key, long seq, ProbeEvent event) {}

  private final PriorityQueue<Queued> order =
      new PriorityQueue<>(
          (a, b) -> a.key != b.key ? Long.compare(a.key, b.key) : Long.compare(a.seq, b.seq));
  private final long windowNanos;
  private long seq;
  private long released;

  ReorderBuffer(Duration window) {
    this.windowNanos = window.toNanos();
  }

  void add(ProbeEvent event) {
    order.add(new Queued(key(event), seq++, event));
  }

  /** The time events are ordered by. */
  static long key(ProbeEvent event) {
    return event instanceof ProbeEvent.Sync s ? s.endMonoNs() : event.monoNs();
  }

  /** What is older than this at {@code nowMono} is final. */
  long horizon(long nowMono) {
    return nowMono - windowNanos;
  }

  /** Hands {@code out} every event older than the window at {@code nowMono}, in time order. */
  void release(long nowMono, Consumer<ProbeEvent> out) {
    long horizon = horizon(nowMono);
    while (!order.isEmpty() && order.peek().key < horizon) {
      released++;
      out.accept(order.poll().event);
    }
  }

  /** The input ended: hands {@code out} every event held, in time order. */
  void drain(Consumer<ProbeEvent> out) {
    while (!order.isEmpty()) {
      released++;
      out.accept(order.poll().event);
    }
  }

  /** Events waiting. */
  int held() {
    return order.size();
  }

  /** Events handed on so far. */
  long released() {
    return released;
  }
}
