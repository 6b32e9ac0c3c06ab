package dev.llmlat.ingest.spans;

import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryWriter;
import java.util.List;

/** Rows of one table being encoded as {@code RowBinary}, and their insert. */
abstract class RowBinaryBatch {
  final RowBinaryWriter out;
  int rows;

  RowBinaryBatch(int initialCapacity) {
    out = new RowBinaryWriter(initialCapacity);
  }

  abstract String table();

  abstract List<String> columns();

  public int rows() {
    return rows;
  }

  public int bytes() {
    return out.size();
  }

  public byte[] toByteArray() {
    return out.toByteArray();
  }

  /** Writes the rows added so far into the table, then starts a new batch. */
  public void insertInto(ClickHouseStore store, String deduplicationToken) {
    insertInto(store, deduplicationToken, table());
  }

  /** The same into {@code table}, a table of the same structure. */
  public void insertInto(ClickHouseStore store, String deduplicationToken, String table) {
    if (rows == 0) {
      return;
    }
    store.insertRowBinary(table, columns(), out.toByteArray(), deduplicationToken);
    out.reset();
    rows = 0;
  }
}
