package dev.llmlat.gpu.internal;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The rows of one activity table (kernels, memcpys or memsets) in start order, one row at a time
 * in plain fields: no boxing, and no {@code wasNull()} round trips (NULLs arrive as -1 sentinels,
 * see {@link NsysExport#activityScan}).
 */
final class ActivityCursor implements AutoCloseable {
  /** Correlation id or {@code globalPid} was NULL (correlation ids are uint32, globalPid positive). */
  static final long NONE = -1;

  final int kind;
  private final PreparedStatement statement;
  private final ResultSet rows;
  private boolean hasRow;
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

  ActivityCursor(int kind, PreparedStatement statement) throws SQLException {
    this.kind = kind;
    this.statement = statement;
    statement.setFetchSize(4096);
    this.rows = statement.executeQuery();
    this.bytes = -1;
    this.copyKind = -1;
    advance();
  }

  boolean hasRow() {
    return hasRow;
  }

  /** Moves to the next row; {@link #hasRow()} tells whether there was one. */
  void advance() throws SQLException {
    hasRow = rows.next();
    if (!hasRow) {
      return;
    }
    start = rows.getLong(1);
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
