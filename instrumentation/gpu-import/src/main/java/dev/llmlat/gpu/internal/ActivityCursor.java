package dev.llmlat.gpu.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The rows of one activity table (kernels, memcpys or memsets), one row at a time in plain fields:
 * no boxing, and no {@code wasNull()} round trips (NULLs arrive as -1 sentinels, see
 * {@link NsysExport#activityScan}). Read in rowid order, it notes a row that starts before the row
 * read before it; read sorted ({@link NsysExport#sortedActivityScan}), each row says whether a
 * rowid-order read had handed it out.
 */
final class ActivityCursor implements AutoCloseable {
  /** Correlation id or {@code globalPid} was NULL (correlation ids are uint32, globalPid positive). */
  static final long NONE = -1;

  final int kind;
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

  /** @param sorted whether {@code statement} is a {@link NsysExport#sortedActivityScan} */
  ActivityCursor(int kind, PreparedStatement statement, boolean sorted) throws SQLException {
    this.kind = kind;
    this.statement = statement;
    this.sorted = sorted;
    this.seenColumn = kind == GpuSpanWriter.MEMCPY ? 9 : 8;
    statement.setFetchSize(4096);
    this.rows = statement.executeQuery();
    this.bytes = -1;
    this.copyKind = -1;
    advance();
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
  void advance() throws SQLException {
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
