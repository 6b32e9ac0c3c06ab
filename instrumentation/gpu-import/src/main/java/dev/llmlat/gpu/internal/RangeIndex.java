package dev.llmlat.gpu.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The matched CPU ranges of each thread, answering "which innermost matched range was open on
 * thread T at time t" — how a launch call finds its step. Ranges of one thread nest (push/pop); the
 * innermost is the one that started last among those still open.
 */
public final class RangeIndex {
  private final Map<Long, List<long[]>> building = new HashMap<>();
  private Map<Long, Thread> threads;
  private long cachedThread = Long.MIN_VALUE;
  private Thread cached;

  private static final class Thread {
    final long[] starts;
    final long[] ends;
    final int[] steps;
    final int[] parents;

    Thread(List<long[]> ranges) {
      ranges.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(b[1], a[1]));
      int n = ranges.size();
      starts = new long[n];
      ends = new long[n];
      steps = new int[n];
      parents = new int[n];
      int[] stack = new int[n];
      int depth = 0;
      for (int i = 0; i < n; i++) {
        long[] r = ranges.get(i);
        starts[i] = r[0];
        ends[i] = r[1];
        steps[i] = (int) r[2];
        while (depth > 0 && ends[stack[depth - 1]] <= r[0]) {
          depth--;
        }
        parents[i] = depth > 0 ? stack[depth - 1] : -1;
        stack[depth++] = i;
      }
    }

    /** Index of the last range starting at or before the previous lookup's time. */
    private int last;

    int find(long t) {
      int i = lastStartingBy(t);
      while (i >= 0) {
        if (t < ends[i] || (t == ends[i] && starts[i] == ends[i])) {
          return steps[i];
        }
        i = parents[i];
      }
      return -1;
    }

    /**
     * The last index whose start is at most {@code t}, or -1; launches come in time order, so try
     * where the last lookup ended first.
     */
    private int lastStartingBy(long t) {
      int n = starts.length;
      for (int i = last; i < n && i <= last + 1; i++) {
        if (starts[i] <= t && (i + 1 == n || starts[i + 1] > t)) {
          last = i;
          return i;
        }
      }
      int i = Arrays.binarySearch(starts, t);
      if (i < 0) {
        i = -i - 2;
      } else {
        while (i + 1 < n && starts[i + 1] == t) {
          i++;
        }
      }
      last = Math.max(i, 0);
      return i;
    }
  }

  public void add(long thread, long startNs, long endNs, int step) {
    building.computeIfAbsent(thread, k -> new ArrayList<>()).add(new long[] {startNs, endNs, step});
  }

  public boolean isEmpty() {
    return building.isEmpty() && (threads == null || threads.isEmpty());
  }

  /** The step of the innermost matched range open on {@code thread} at {@code t}, or -1. */
  public int find(long thread, long t) {
    if (threads == null) {
      threads = new HashMap<>();
      building.forEach((k, v) -> threads.put(k, new Thread(v)));
      building.clear();
    }
    if (thread != cachedThread) {
      cached = threads.get(thread);
      cachedThread = thread;
    }
    return cached == null ? -1 : cached.find(t);
  }
}
