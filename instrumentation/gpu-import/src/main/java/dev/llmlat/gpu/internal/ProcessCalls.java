package dev.llmlat.gpu.internal;

import java.util.Arrays;

/**
 * One process's runtime/driver calls in arrays sorted by correlation id, one entry per id: start
 * and thread of the earliest call with that id. Calls come, and are looked up, almost in
 * correlation order (CUPTI counts the ids up per process, the table is in start order), so adding
 * appends and a lookup searches from where the previous one ended: both touch memory in order,
 * where a hash table missed the cache on every call (measured: a third of the import's Java time).
 * 20 bytes a call.
 */
final class ProcessCalls {
  final long process;
  private long[] correlation = new long[1024];
  private long[] start = new long[1024];
  private int[] thread = new int[1024];
  private int size;
  private boolean sorted = true;
  private boolean sealed;
  private int cursor;

  ProcessCalls(long process) {
    this.process = process;
  }

  /** Records a call; {@code threadIndex} is the caller's index of its thread. */
  void add(long correlationId, long startNs, int threadIndex) {
    if (sealed) {
      throw new IllegalStateException("calls of process " + process + " already looked up");
    }
    if (size == correlation.length) {
      int n = size * 2;
      correlation = Arrays.copyOf(correlation, n);
      start = Arrays.copyOf(start, n);
      thread = Arrays.copyOf(thread, n);
    }
    if (size > 0 && correlationId < correlation[size - 1]) {
      sorted = false;
    }
    correlation[size] = correlationId;
    start[size] = startNs;
    thread[size] = threadIndex;
    size++;
  }

  /**
   * Sorts by correlation id (stable: of equal ids, the order added), then keeps per id the call
   * with the earliest start, the first added on equal starts: a launch may appear twice under one
   * id (the runtime call and the driver call it made), and the outermost call the application made
   * is the one its range was open around.
   */
  void seal() {
    if (sealed) {
      return;
    }
    sealed = true;
    if (!sorted) {
      sort();
    }
    int w = 0;
    for (int r = 0; r < size; r++) {
      if (w > 0 && correlation[w - 1] == correlation[r]) {
        if (start[r] < start[w - 1]) {
          start[w - 1] = start[r];
          thread[w - 1] = thread[r];
        }
      } else {
        correlation[w] = correlation[r];
        start[w] = start[r];
        thread[w] = thread[r];
        w++;
      }
    }
    size = w;
  }

  private void sort() {
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (int i = 0; i < size; i++) {
      min = Math.min(min, correlation[i]);
      max = Math.max(max, correlation[i]);
    }
    int indexBits = 32 - Integer.numberOfLeadingZeros(Math.max(1, size - 1));
    Integer[] boxed = null;
    int[] order = new int[size];
    if (max - min >= 0 && max - min < (1L << (63 - indexBits))) {
      // One primitive sort of (id - min, position) packed in a long: stable, no boxing.
      long[] keys = new long[size];
      for (int i = 0; i < size; i++) {
        keys[i] = ((correlation[i] - min) << indexBits) | i;
      }
      Arrays.sort(keys);
      long mask = (1L << indexBits) - 1;
      for (int i = 0; i < size; i++) {
        order[i] = (int) (keys[i] & mask);
      }
    } else {
      boxed = new Integer[size];
      for (int i = 0; i < size; i++) {
        boxed[i] = i;
      }
      Arrays.sort(boxed, (a, b) -> Long.compare(correlation[a], correlation[b])); // stable
      for (int i = 0; i < size; i++) {
        order[i] = boxed[i];
      }
    }
    long[] c = new long[size];
    long[] s = new long[size];
    int[] t = new int[size];
    for (int i = 0; i < size; i++) {
      c[i] = correlation[order[i]];
      s[i] = start[order[i]];
      t[i] = thread[order[i]];
    }
    correlation = c;
    start = s;
    thread = t;
  }

  /** The index of the call with this id, or -1. Seals the calls on first use. */
  int find(long correlationId) {
    if (!sealed) {
      seal();
    }
    if (size == 0 || correlationId < correlation[0] || correlationId > correlation[size - 1]) {
      return -1;
    }
    int i = lowerBound(correlationId);
    cursor = i;
    return correlation[i] == correlationId ? i : -1;
  }

  /**
   * First index whose id is at least {@code c}, galloping from the cursor (c is within the ids).
   */
  private int lowerBound(long c) {
    int lo;
    int hi;
    int at = cursor;
    if (correlation[at] < c) {
      // answer in (at, size - 1]
      int step = 1;
      lo = at;
      hi = at + 1;
      while (hi < size - 1 && correlation[hi] < c) {
        lo = hi;
        step <<= 1;
        hi = Math.min(size - 1, at + step);
      }
    } else {
      // answer in [0, at]
      int step = 1;
      hi = at;
      lo = at - 1;
      while (lo >= 0 && correlation[lo] >= c) {
        hi = lo;
        step <<= 1;
        lo = at - step;
      }
      lo = Math.max(lo, -1);
    }
    // invariant: correlation[hi] >= c, and lo < 0 or correlation[lo] < c
    while (hi - lo > 1) {
      int mid = lo + (hi - lo) / 2;
      if (correlation[mid] < c) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hi;
  }

  long startAt(int i) {
    return start[i];
  }

  int threadAt(int i) {
    return thread[i];
  }

  /** Calls kept (one per id once sealed). */
  int size() {
    if (!sealed) {
      seal();
    }
    return size;
  }
}
