package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.InvalidExportException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Kernels, memcpys and memsets of an Nsight export in one start-ordered stream, merged from one
 * cursor per table. Equal starts come kernel, memcpy, memset, each in table order: the order a
 * {@code UNION ALL ... ORDER BY start} gives.
 *
 * <p>The tables are read in rowid order, which is start order in the exports Nsight writes; the
 * stream checks that as it goes, not in a pass of its own (that pass cost half a raw scan of the
 * kernel table). At the first row that starts before its table's previous row, {@link #next()}
 * stops and {@link #outOfOrder()} says so; {@link #rescanSorted} then reads every table again
 * sorted by sqlite, each activity flagged {@link ActivityCursor#seen} when this stream had already
 * handed it out, so a consumer can finish without handing anything out twice.
 */
public final class ActivityStream implements AutoCloseable {
  private static final String[] TABLES = {NsysExport.KERNEL, NsysExport.MEMCPY, NsysExport.MEMSET};

  private final List<ActivityCursor> cursors;
  private ActivityCursor current;
  private boolean outOfOrder;

  private ActivityStream(List<ActivityCursor> cursors) {
    this.cursors = cursors;
  }

  /** The export's activities, its tables read in rowid order. */
  public static ActivityStream open(NsysExport export) throws SQLException, InvalidExportException {
    return open(export, null);
  }

  /**
   * @param seenBelow per table kind, the rowid below which rows count as seen; null: read in rowid
   *     order
   */
  private static ActivityStream open(NsysExport export, long[] seenBelow)
      throws SQLException, InvalidExportException {
    List<ActivityCursor> cursors = new ArrayList<>(3);
    ActivityStream stream = new ActivityStream(cursors);
    try {
      for (int kind = 0; kind < TABLES.length; kind++) {
        if (export.has(TABLES[kind])) {
          cursors.add(
              seenBelow == null
                  ? new ActivityCursor(
                      kind, TABLES[kind], export, export.activityScan(TABLES[kind]), false)
                  : new ActivityCursor(
                      kind,
                      TABLES[kind],
                      export,
                      export.sortedActivityScan(TABLES[kind], seenBelow[kind]),
                      true));
        }
      }
    } catch (SQLException | InvalidExportException | RuntimeException e) {
      stream.close();
      throw e;
    }
    return stream;
  }

  /**
   * Moves to the next activity in start order; false when all are read or when a table turned out
   * not to be in start order ({@link #outOfOrder()}). The activity's fields are those of {@link
   * #current()} until the next call.
   */
  public boolean next() throws SQLException, InvalidExportException {
    if (outOfOrder) {
      return false;
    }
    if (current != null) {
      current.advance();
      if (current.outOfOrder()) {
        outOfOrder = true;
        current = null;
        return false;
      }
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

  /** Whether {@link #next()} stopped at a row out of start order. */
  public boolean outOfOrder() {
    return outOfOrder;
  }

  ActivityCursor current() {
    return current;
  }

  /**
   * Closes this stream and reads all activities again, every table sorted by start, each marked
   * {@link ActivityCursor#seen} when this stream handed it out.
   */
  public ActivityStream rescanSorted(NsysExport export)
      throws SQLException, InvalidExportException {
    long[] seenBelow = new long[TABLES.length];
    for (ActivityCursor c : cursors) {
      seenBelow[c.kind] = export.rowidAfter(TABLES[c.kind], c.rowsHandedOut());
    }
    close();
    return open(export, seenBelow);
  }

  /** Counts what the rows read were kept with in {@code w}: once the stream is read to its end. */
  void addWarnings(Warnings w) throws SQLException {
    for (ActivityCursor c : cursors) {
      c.addWarnings(w);
    }
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
