package dev.llmlat.gpu.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The CUDA runtime/driver calls of an Nsight export by (correlation id, process): the launching
 * thread and start of the earliest call, which is how a kernel, memcpy or memset finds the range
 * open at its launch. Read in one plain scan of {@code CUPTI_ACTIVITY_KIND_RUNTIME} into primitive
 * arrays; measured: a sqlite {@code GROUP BY} over the same rows took longer than the whole import
 * should, and a boxed map spent most of its time allocating.
 */
public final class LaunchCalls {
  private static final long EMPTY = Long.MIN_VALUE;
  // One entry = 4 adjacent longs (correlation, process, globalTid, start): one cache miss per probe
  // instead of one per field; the table holds a million entries and more for long captures.
  private static final int WIDTH = 4;

  private long[] table;
  private int mask;
  private int size;

  LaunchCalls(long expected) {
    // Load factor at most 3/4 (linear probing over a well-mixed hash stays short).
    int capacity = Integer.highestOneBit((int) Math.min(1 << 28, Math.max(1024, expected * 4 / 3)) - 1) << 1;
    allocate(capacity);
  }

  /**
   * Reads the runtime calls with {@code fromRowid <= rowid < toRowid}; an empty table when the
   * export has none. Two halves read on two connections at once take half the time.
   */
  public static LaunchCalls read(NsysExport export, long fromRowid, long toRowid) throws SQLException {
    if (!export.has(NsysExport.RUNTIME) || toRowid <= fromRowid) {
      return new LaunchCalls(0);
    }
    // Sized up front from the rowid span: rehashing a large table cost more than the scan.
    LaunchCalls calls = new LaunchCalls(toRowid - fromRowid);
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
    return calls;
  }

  /**
   * Records a call. A launch may appear twice under one correlation id (the runtime call and the
   * driver call it made): the earliest wins, i.e. the outermost call the application made; on equal
   * starts the first recorded.
   */
  void add(long correlation, long process, long globalTid, long start) {
    if ((size + 1) * 4L > (mask + 1) * 3L) {
      grow();
    }
    int i = slot(table, mask, correlation, process);
    if (table[i] == EMPTY) {
      table[i] = correlation;
      table[i + 1] = process;
      table[i + 2] = globalTid;
      table[i + 3] = start;
      size++;
    } else if (start < table[i + 3]) {
      table[i + 2] = globalTid;
      table[i + 3] = start;
    }
  }

  /**
   * Finds the call with this correlation id in this process ({@code globalPid >> 24}) in this table
   * or else in {@code later} (calls of higher rowids, may be null), the earlier start winning as in
   * {@link #add}. Returns an opaque handle for {@link #thread}/{@link #start}, or -1.
   */
  public static long find(LaunchCalls first, LaunchCalls later, long correlation, long process) {
    int a = first.find(correlation, process);
    int b = later == null ? -1 : later.find(correlation, process);
    if (b < 0) {
      return a;
    }
    if (a >= 0 && first.table[a + 3] <= later.table[b + 3]) {
      return a;
    }
    return (1L << 32) | b; // bit 32: the slot is in the later table
  }

  /** The calling thread's {@code globalTid} of the call {@code handle} from {@link #find(LaunchCalls, LaunchCalls, long, long)}. */
  public static long thread(LaunchCalls first, LaunchCalls later, long handle) {
    return (handle >>> 32) == 0 ? first.table[(int) handle + 2] : later.table[(int) handle + 2];
  }

  /** Start of the call {@code handle}. */
  public static long start(LaunchCalls first, LaunchCalls later, long handle) {
    return (handle >>> 32) == 0 ? first.table[(int) handle + 3] : later.table[(int) handle + 3];
  }

  int find(long correlation, long process) {
    int i = slot(table, mask, correlation, process);
    return table[i] == EMPTY ? -1 : i;
  }

  public int size() {
    return size;
  }

  /** Index of the entry's first long: linear probing over entries. */
  private static int slot(long[] table, int mask, long correlation, long process) {
    int e = (int) Ids.mix(correlation * 0x9e3779b97f4a7c15L + process) & mask;
    int i = e * WIDTH;
    while (table[i] != EMPTY && (table[i] != correlation || table[i + 1] != process)) {
      e = (e + 1) & mask;
      i = e * WIDTH;
    }
    return i;
  }

  private void allocate(int capacity) {
    table = new long[capacity * WIDTH];
    for (int i = 0; i < table.length; i += WIDTH) {
      table[i] = EMPTY;
    }
    mask = capacity - 1;
  }

  private void grow() {
    long[] old = table;
    allocate((mask + 1) * 2);
    for (int j = 0; j < old.length; j += WIDTH) {
      if (old[j] != EMPTY) {
        int i = slot(table, mask, old[j], old[j + 1]);
        System.arraycopy(old, j, table, i, WIDTH);
      }
    }
  }
}
