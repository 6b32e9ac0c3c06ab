package dev.llmlat.gpu.internal;

import java.util.Arrays;

/**
 * Length of the union of [start, end) intervals. {@link #streaming()} needs intervals in start
 * order (as Nsight activities come, see {@link ActivityStream}) and keeps constant memory; {@link
 * #buffered()} takes any order (JSON traces) and keeps two longs per interval until {@link
 * #length()}.
 */
public final class IntervalUnion {
  private final boolean buffer;
  private long curStart = Long.MIN_VALUE;
  private long curEnd = Long.MIN_VALUE;
  private long closed;
  private long[] pairs;
  private int n;
  private long min = Long.MAX_VALUE;
  private long max = Long.MIN_VALUE;
  private long count;

  private IntervalUnion(boolean buffer) {
    this.buffer = buffer;
    this.pairs = buffer ? new long[32] : null;
  }

  public static IntervalUnion streaming() {
    return new IntervalUnion(false);
  }

  public static IntervalUnion buffered() {
    return new IntervalUnion(true);
  }

  public void add(long start, long end) {
    if (end < start) {
      end = start;
    }
    count++;
    if (start < min) {
      min = start;
    }
    if (end > max) {
      max = end;
    }
    if (buffer) {
      if (n + 2 > pairs.length) {
        pairs = Arrays.copyOf(pairs, pairs.length * 2);
      }
      pairs[n++] = start;
      pairs[n++] = end;
      return;
    }
    if (curStart == Long.MIN_VALUE) {
      curStart = start;
      curEnd = end;
    } else if (start < curStart) {
      throw new IllegalStateException("interval out of start order: " + start + " < " + curStart);
    } else if (start <= curEnd) {
      curEnd = Math.max(curEnd, end);
    } else {
      closed += curEnd - curStart;
      curStart = start;
      curEnd = end;
    }
  }

  /** The union's length, in the intervals' unit. */
  public long length() {
    if (!buffer) {
      return curStart == Long.MIN_VALUE ? 0 : closed + (curEnd - curStart);
    }
    int k = n / 2;
    if (k == 0) {
      return 0;
    }
    // Sort interval indexes by start without boxing: pack (start, index) is not possible for
    // arbitrary longs, so sort an index array by start.
    Integer[] idx = new Integer[k];
    for (int i = 0; i < k; i++) {
      idx[i] = i;
    }
    long[] p = pairs;
    Arrays.sort(idx, (a, b) -> Long.compare(p[2 * a], p[2 * b]));
    long total = 0;
    long s = p[2 * idx[0]];
    long e = p[2 * idx[0] + 1];
    for (int j = 1; j < k; j++) {
      long xs = p[2 * idx[j]];
      long xe = p[2 * idx[j] + 1];
      if (xs <= e) {
        e = Math.max(e, xe);
      } else {
        total += e - s;
        s = xs;
        e = xe;
      }
    }
    return total + (e - s);
  }

  public long count() {
    return count;
  }

  /** Earliest start, or {@link Long#MAX_VALUE} when empty. */
  public long min() {
    return min;
  }

  /** Latest end, or {@link Long#MIN_VALUE} when empty. */
  public long max() {
    return max;
  }
}
