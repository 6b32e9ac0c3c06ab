package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.InvalidExportException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The rows of one activity table (kernels, memcpys or memsets), one row at a time in plain fields:
 * no boxing, and no {@code wasNull()} round trips (NULLs arrive as -1 sentinels, see {@link
 * NsysExport#activityScan}). Read in rowid order, it notes a row that starts before the row read
 * before it; read sorted ({@link NsysExport#sortedActivityScan}), each row says whether a
 * rowid-order read had handed it out.
 *
 * <p>Each row is checked as it is read, with a few comparisons: its times must be Unix ns once the
 * session start is added (1970 to 2262), its device and stream must fit {@code gpu_kernels}; a row
 * that does not fails the import naming table, rowid and column. A row that ends before it starts
 * (CUPTI leaves the end 0 when it lost it) is kept as zero-length and counted ({@link
 * #addWarnings}).
 */
final class ActivityCursor implements AutoCloseable {
  /**
   * Correlation id or {@code globalPid} was NULL (correlation ids are uint32, globalPid positive).
   */
  static final long NONE = -1;

  final int kind;
  private final String table;
  private final NsysExport export;

  /** Raw times in [minTime, maxTime] are Unix ns in a long once the session start is added. */
  private final long minTime;

  private final long maxTime;
  private final PreparedStatement statement;
  private final ResultSet rows;
  private final boolean sorted;
  private final int seenColumn;
  private boolean hasRow;
  private long rowsRead;

  /** Rowid order only: the current row starts before the previous one. */
  private boolean outOfOrder;

  long start;
  long end;
  long device;
  long stream;
  long correlation;
  long globalPid;

  /** Kernels: StringIds id of the name, or {@link #NONE}. */
  long nameId;

  /** Memcpys and memsets; -1 for kernels. */
  long bytes;

  /** Memcpys; -1 otherwise. */
  int copyKind;

  /** Sorted reads only: the row is among those an earlier rowid-order read handed out. */
  boolean seen;

  /** Rows that ended before they started, read as zero-length. */
  private long reversed;

  /** The first of them: its rowid (sorted reads), else its position in rowid order, from 1. */
  private long firstReversed;

  /**
   * @param sorted whether {@code statement} is a {@link NsysExport#sortedActivityScan}
   */
  ActivityCursor(
      int kind, String table, NsysExport export, PreparedStatement statement, boolean sorted)
      throws SQLException, InvalidExportException {
    this.kind = kind;
    this.table = table;
    this.export = export;
    long offset = export.epochOffsetNs();
    this.minTime = -offset;
    this.maxTime = Long.MAX_VALUE - offset;
    this.statement = statement;
    this.sorted = sorted;
    this.seenColumn = kind == GpuSpanWriter.MEMCPY ? 9 : 8;
    statement.setFetchSize(4096);
    this.rows = statement.executeQuery();
    this.bytes = -1;
    this.copyKind = -1;
    try {
      advance();
    } catch (InvalidExportException e) {
      close();
      throw e;
    }
  }

  boolean hasRow() {
    return hasRow;
  }

  boolean outOfOrder() {
    return outOfOrder;
  }

  /** Rows handed out so far: those read before the current one. */
  long rowsHandedOut() {
    return hasRow ? rowsRead - 1 : rowsRead;
  }

  /** Moves to the next row; {@link #hasRow()} tells whether there was one. */
  void advance() throws SQLException, InvalidExportException {
    hasRow = rows.next();
    if (!hasRow) {
      return;
    }
    long previous = start;
    start = rows.getLong(1); // NULL reads as 0: sorted first, as ORDER BY puts NULLs
    if (!sorted && rowsRead > 0 && start < previous) {
      outOfOrder = true;
    }
    rowsRead++;
    end = rows.getLong(2);
    device = rows.getLong(3);
    stream = rows.getLong(4);
    correlation = rows.getLong(5);
    globalPid = rows.getLong(6);
    if (kind == GpuSpanWriter.KERNEL) {
      nameId = rows.getLong(7);
    } else {
      bytes = rows.getLong(7);
      if (kind == GpuSpanWriter.MEMCPY) {
        copyKind = rows.getInt(8);
      }
    }
    if (sorted) {
      seen = rows.getInt(seenColumn) != 0;
    }
    if (end < start) {
      if (reversed++ == 0) {
        firstReversed = sorted ? rows.getLong(seenColumn + 1) : rowsRead;
      }
      end = start;
    }
    // One branch for all checks on the hot path; which one failed is sorted out in refuse().
    if ((start < minTime)
        | (end > maxTime)
        | !Limits.fitsDevice(device)
        | !Limits.fitsUint32(stream)) {
      refuse();
    }
  }

  private void refuse() throws SQLException, InvalidExportException {
    long rowid = sorted ? rows.getLong(seenColumn + 1) : export.rowidAfter(table, rowsRead - 1);
    String problem =
        start < minTime
            ? "start " + export.timeProblem(start)
            : end > maxTime
                ? (start > maxTime
                    ? "start " + export.timeProblem(start)
                    : "end " + export.timeProblem(end))
                : !Limits.fitsDevice(device)
                    ? "deviceId " + Limits.device(device)
                    : "streamId " + Limits.stream(stream);
    throw new InvalidExportException(export.file(), table + " rowid " + rowid + ": " + problem);
  }

  static final String REVERSED_WARNING =
      "GPU activities that end before they start (end lost by CUPTI): " + "kept as zero-length";

  /** Counts what was kept with a warning in {@code w}; call once the rows are read. */
  void addWarnings(Warnings w) throws SQLException {
    if (reversed > 0) {
      long rowid = sorted ? firstReversed : export.rowidAfter(table, firstReversed - 1);
      w.add(REVERSED_WARNING, reversed, table + " rowid " + rowid);
    }
  }

  @Override
  public void close() throws SQLException {
    try {
      rows.close();
    } finally {
      statement.close();
    }
  }
}
