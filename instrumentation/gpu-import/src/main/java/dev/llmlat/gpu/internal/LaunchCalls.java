package dev.llmlat.gpu.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashMap;

/**
 * The CUDA runtime/driver calls of an Nsight export by (correlation id, process): the launching
 * thread and start of the earliest call, which is how a kernel, memcpy or memset finds the range
 * open at its launch. Read in one plain scan of {@code CUPTI_ACTIVITY_KIND_RUNTIME} into primitive
 * arrays, one {@link ProcessCalls} per process (CUPTI counts correlation ids per process);
 * measured: a sqlite {@code GROUP BY} over the same rows took longer than the whole import should,
 * a boxed map spent most of its time allocating, and a primitive hash table missed the cache on
 * every call.
 */
public final class LaunchCalls {
  /**
   * Marks a handle of the later of two tables in {@link #find(LaunchCalls, LaunchCalls, long,
   * long)}.
   */
  private static final long LATER = 1L << 62;

  private ProcessCalls[] processes = new ProcessCalls[4];
  private int processCount;
  private ProcessCalls lastProcess;
  private int lastProcessIndex;
  private long[] threads = new long[8];
  private int threadCount;
  private int lastThread;
  private HashMap<Long, Integer> threadIndexes;

  LaunchCalls() {}

  /**
   * Reads the runtime calls with {@code fromRowid <= rowid < toRowid}; an empty table when the
   * export has none. The importing thread and its reader each read a part, on connections of their
   * own.
   */
  public static LaunchCalls read(NsysExport export, long fromRowid, long toRowid)
      throws SQLException {
    if (!export.has(NsysExport.RUNTIME) || toRowid <= fromRowid) {
      return new LaunchCalls();
    }
    LaunchCalls calls = new LaunchCalls();
    // Three plain columns: packing them into one integer in SQL, as an earlier version did, cost
    // sqlite more than the two JNI calls a row it saved (measured: 128 vs 113 ms on the x20
    // capture).
    try (PreparedStatement ps = export.launchCalls()) {
      ps.setLong(1, fromRowid);
      ps.setLong(2, toRowid);
      ps.setFetchSize(4096);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          long globalTid = rs.getLong(2);
          calls.add(rs.getLong(1), globalTid >> 24, globalTid, rs.getLong(3));
        }
      }
    }
    calls.seal();
    return calls;
  }

  /**
   * Records a call. A launch may appear twice under one correlation id (the runtime call and the
   * driver call it made): the earliest wins, i.e. the outermost call the application made; on equal
   * starts the first recorded.
   */
  void add(long correlation, long process, long globalTid, long start) {
    ProcessCalls p = lastProcess;
    if (p == null || p.process != process) {
      int i = indexOf(process);
      if (i < 0) {
        if (processCount == processes.length) {
          processes = Arrays.copyOf(processes, processCount * 2);
        }
        i = processCount++;
        processes[i] = new ProcessCalls(process);
      }
      p = processes[i];
      lastProcess = p;
      lastProcessIndex = i;
    }
    p.add(correlation, start, threadIndex(globalTid));
  }

  /**
   * Sorts and settles the calls for lookups (done by {@link #read}); no call can be added after.
   */
  void seal() {
    for (int i = 0; i < processCount; i++) {
      processes[i].seal();
    }
  }

  private int indexOf(long process) {
    for (int i = 0; i < processCount; i++) {
      if (processes[i].process == process) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Finds the call with this correlation id in this process ({@code globalPid >> 24}) in this table
   * or else in {@code later} (calls of higher rowids, may be null), the earlier start winning as in
   * {@link #add}. Returns an opaque handle for {@link #thread}/{@link #start}, or -1.
   */
  public static long find(LaunchCalls first, LaunchCalls later, long correlation, long process) {
    long a = first.find(correlation, process);
    long b = later == null ? -1 : later.find(correlation, process);
    if (b < 0) {
      return a;
    }
    if (a >= 0 && first.startAt(a) <= later.startAt(b)) {
      return a;
    }
    return LATER | b;
  }

  /**
   * The calling thread's {@code globalTid} of the call {@code handle} from {@link
   * #find(LaunchCalls, LaunchCalls, long, long)}.
   */
  public static long thread(LaunchCalls first, LaunchCalls later, long handle) {
    return (handle & LATER) == 0 ? first.threadAt(handle) : later.threadAt(handle & ~LATER);
  }

  /** Start of the call {@code handle}. */
  public static long start(LaunchCalls first, LaunchCalls later, long handle) {
    return (handle & LATER) == 0 ? first.startAt(handle) : later.startAt(handle & ~LATER);
  }

  private long threadAt(long h) {
    return threads[processes[(int) (h >>> 32)].threadAt((int) h)];
  }

  private long startAt(long h) {
    return processes[(int) (h >>> 32)].startAt((int) h);
  }

  /** -1, or {@code process index << 32 | call index}. */
  long find(long correlation, long process) {
    int pi;
    if (lastProcess != null && lastProcess.process == process) {
      pi = lastProcessIndex;
    } else {
      pi = indexOf(process);
      if (pi < 0) {
        return -1;
      }
      lastProcess = processes[pi];
      lastProcessIndex = pi;
    }
    int i = processes[pi].find(correlation);
    return i < 0 ? -1 : ((long) pi << 32) | i;
  }

  private int threadIndex(long globalTid) {
    if (threadCount > 0 && threads[lastThread] == globalTid) {
      return lastThread;
    }
    int found = -1;
    if (threadIndexes != null) {
      Integer i = threadIndexes.get(globalTid);
      found = i == null ? -1 : i;
    } else {
      for (int i = 0; i < threadCount; i++) {
        if (threads[i] == globalTid) {
          found = i;
          break;
        }
      }
    }
    if (found < 0) {
      if (threadCount == threads.length) {
        threads = Arrays.copyOf(threads, threadCount * 2);
      }
      found = threadCount++;
      threads[found] = globalTid;
      if (threadIndexes == null && threadCount > 32) { // many threads: stop scanning them
        threadIndexes = new HashMap<>();
        for (int i = 0; i < threadCount; i++) {
          threadIndexes.put(threads[i], i);
        }
      } else if (threadIndexes != null) {
        threadIndexes.put(globalTid, found);
      }
    }
    lastThread = found;
    return found;
  }

  /** Calls kept: one per (correlation id, process). */
  public int size() {
    int n = 0;
    for (int i = 0; i < processCount; i++) {
      n += processes[i].size();
    }
    return n;
  }
}
