package dev.llmlat.gpu.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.HashMap;

/**
 * The CUDA runtime/driver calls of an Nsight export by (correlation id, process): the launching
 * thread and start of the earliest call, which is how a kernel, memcpy or memset finds the range
 * open at its launch. Read in one plain scan of {@code CUPTI_ACTIVITY_KIND_RUNTIME} into primitive
 * arrays, one {@link ProcessCalls} per process (CUPTI counts correlation ids per process); measured:
 * a sqlite {@code GROUP BY} over the same rows took longer than the whole import should, a boxed
 * map spent most of its time allocating, and a primitive hash table missed the cache on every call.
 */
public final class LaunchCalls {
  /** Marks a handle of the later of two tables in {@link #find(LaunchCalls, LaunchCalls, long, long)}. */
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
   * export has none. Two halves read on two connections at once take half the time.
   */
  public static LaunchCalls read(NsysExport export, long fromRowid, long toRowid) throws SQLException {
    if (!export.has(NsysExport.RUNTIME) || toRowid <= fromRowid) {
      return new LaunchCalls();
    }
    Packing pack = Packing.plan(export, fromRowid, toRowid);
    LaunchCalls calls = new LaunchCalls();
    try (PreparedStatement ps = export.launchCalls(pack == null ? null : pack.sql())) {
      ps.setLong(1, fromRowid);
      ps.setLong(2, toRowid);
      ps.setFetchSize(4096);
      try (ResultSet rs = ps.executeQuery()) {
        if (pack == null) {
          while (rs.next()) {
            long globalTid = rs.getLong(2);
            calls.add(rs.getLong(1), globalTid >> 24, globalTid, rs.getLong(3));
          }
        } else {
          // One JNI column read per row instead of three (measured: the column reads, not sqlite,
          // are most of this scan); rows outside the planned bounds come unpacked in columns 2-4.
          long cr = pack.correlations;
          long nt = pack.threads.length;
          long c0 = pack.c0;
          long s0 = pack.s0;
          long[] threads = pack.threads;
          while (rs.next()) {
            long v = rs.getLong(1);
            if (v >= 0) {
              long q = v / cr;
              long correlation = v - q * cr + c0;
              long t = nt == 1 ? 0 : q % nt;
              long start = (nt == 1 ? q : q / nt) + s0;
              long globalTid = threads[(int) t];
              calls.add(correlation, globalTid >> 24, globalTid, start);
            } else {
              long globalTid = rs.getLong(3);
              calls.add(rs.getLong(2), globalTid >> 24, globalTid, rs.getLong(4));
            }
          }
        }
      }
    }
    calls.seal();
    return calls;
  }

  /**
   * How the runtime calls of a rowid range travel in one integer column: {@code ((start - s0) *
   * threads + thread index) * correlations + (correlationId - c0)}, for calls within bounds guessed
   * from the range's first and last rows and on threads seen among its first rows; sqlite computes
   * it, -1 for any other call (which then reads its plain columns). Null when no such packing fits in
   * 63 bits.
   */
  static final class Packing {
    private static final int MAX_THREADS = 16;
    final long s0;
    final long s1;
    final long c0;
    final long c1;
    final long correlations;
    final long[] threads;

    private Packing(long s0, long s1, long c0, long c1, long[] threads) {
      this.s0 = s0;
      this.s1 = s1;
      this.c0 = c0;
      this.c1 = c1;
      this.correlations = c1 - c0 + 1;
      this.threads = threads;
    }

    static Packing plan(NsysExport export, long fromRowid, long toRowid) throws SQLException {
      String t = NsysExport.RUNTIME;
      String where = " WHERE rowid >= " + fromRowid + " AND rowid < " + toRowid
          + " AND correlationId IS NOT NULL AND globalTid IS NOT NULL AND start IS NOT NULL";
      long[] first = edge(export, "SELECT start, correlationId FROM " + t + where + " ORDER BY rowid LIMIT 1");
      long[] last = edge(export, "SELECT start, correlationId FROM " + t + where + " ORDER BY rowid DESC LIMIT 1");
      if (first == null || last == null) {
        return null;
      }
      long[] threads = new long[MAX_THREADS + 1];
      int n = 0;
      try (Statement st = export.db().createStatement();
          ResultSet rs = st.executeQuery("SELECT DISTINCT globalTid FROM (SELECT globalTid FROM " + t + where
              + " LIMIT 4096) LIMIT " + (MAX_THREADS + 1))) {
        while (rs.next()) {
          threads[n++] = rs.getLong(1);
        }
      }
      if (n == 0 || n > MAX_THREADS) {
        return null;
      }
      long[] known = Arrays.copyOf(threads, n);
      long sLo = Math.min(first[0], last[0]);
      long sHi = Math.max(first[0], last[0]);
      long cLo = Math.min(first[1], last[1]);
      long cHi = Math.max(first[1], last[1]);
      if (sLo < 0 || cLo < 0) {
        return null;
      }
      // Margins of 1/64 first (rows are only roughly in start and correlation order), then none.
      for (int shrink = 6; shrink <= 63; shrink += 57) {
        long ms = ((sHi - sLo) >> shrink) + 1;
        long mc = ((cHi - cLo) >> shrink) + 1;
        long s0 = Math.max(0, sLo - ms);
        long s1 = sHi + ms;
        long c0 = Math.max(0, cLo - mc);
        long c1 = cHi + mc;
        if (s1 < 0 || c1 < 0) {
          continue;
        }
        double product = (double) (s1 - s0 + 1) * n * (c1 - c0 + 1);
        if (product < 0x1p62) {
          return new Packing(s0, s1, c0, c1, known);
        }
      }
      return null;
    }

    private static long[] edge(NsysExport export, String sql) throws SQLException {
      try (Statement st = export.db().createStatement(); ResultSet rs = st.executeQuery(sql)) {
        return rs.next() ? new long[] {rs.getLong(1), rs.getLong(2)} : null;
      }
    }

    /** The packed column's expression. */
    String sql() {
      StringBuilder t = new StringBuilder();
      if (threads.length == 1) {
        t.append("CASE globalTid WHEN ").append(threads[0]).append(" THEN 0 END");
      } else {
        t.append("CASE globalTid");
        for (int i = 0; i < threads.length; i++) {
          t.append(" WHEN ").append(threads[i]).append(" THEN ").append(i);
        }
        t.append(" END");
      }
      return "IFNULL(CASE WHEN start BETWEEN " + s0 + " AND " + s1 + " AND correlationId BETWEEN " + c0 + " AND "
          + c1 + " THEN ((start - " + s0 + ") * " + threads.length + " + " + t + ") * " + correlations
          + " + (correlationId - " + c0 + ") END, -1)";
    }
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

  /** Sorts and settles the calls for lookups (done by {@link #read}); no call can be added after. */
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

  /** The calling thread's {@code globalTid} of the call {@code handle} from {@link #find(LaunchCalls, LaunchCalls, long, long)}. */
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
