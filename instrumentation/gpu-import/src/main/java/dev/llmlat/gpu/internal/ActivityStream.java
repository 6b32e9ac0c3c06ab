package dev.llmlat.gpu.internal;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Kernels, memcpys and memsets of an Nsight export in one start-ordered stream, merged from one
 * cursor per table. Equal starts come kernel, memcpy, memset, each in table order: the order the
 * former {@code UNION ALL ... ORDER BY start} gave (sqlite's sorter is stable), kept so that span
 * ids, which follow the sequence, do not change.
 */
public final class ActivityStream implements AutoCloseable {
  private final List<ActivityCursor> cursors;
  private ActivityCursor current;

  private ActivityStream(List<ActivityCursor> cursors) {
    this.cursors = cursors;
  }

  /** The export's activities; checks the tables' order first ({@link NsysExport#unorderedActivityTables()}). */
  public static ActivityStream open(NsysExport export) throws SQLException {
    return open(export, export.unorderedActivityTables());
  }

  /** The export's activities, sorting the tables named in {@code unordered}. */
  static ActivityStream open(NsysExport export, Set<String> unordered) throws SQLException {
    List<ActivityCursor> cursors = new ArrayList<>(3);
    ActivityStream stream = new ActivityStream(cursors);
    try {
      String[] tables = {NsysExport.KERNEL, NsysExport.MEMCPY, NsysExport.MEMSET};
      for (int kind = 0; kind < tables.length; kind++) {
        if (export.has(tables[kind])) {
          cursors.add(new ActivityCursor(kind, export.activityScan(tables[kind], unordered.contains(tables[kind]))));
        }
      }
    } catch (SQLException | RuntimeException e) {
      stream.close();
      throw e;
    }
    return stream;
  }

  /**
   * Moves to the next activity in start order; false when all are read. The activity's fields are
   * those of {@link #current()} until the next call.
   */
  public boolean next() throws SQLException {
    if (current != null) {
      current.advance();
    }
    ActivityCursor best = null;
    for (ActivityCursor c : cursors) { // kind order: the first of equal starts wins
      if (c.hasRow() && (best == null || c.start < best.start)) {
        best = c;
      }
    }
    current = best;
    return best != null;
  }

  ActivityCursor current() {
    return current;
  }

  @Override
  public void close() throws SQLException {
    SQLException first = null;
    for (ActivityCursor c : cursors) {
      try {
        c.close();
      } catch (SQLException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
