package dev.llmlat.store;

import java.util.Iterator;
import java.util.List;

/**
 * The rows of one query as they arrive ({@link ClickHouseStore#stream}), each as text like {@link
 * QueryResult}'s ({@code null} for SQL NULL): only a block of the result is held at a time,
 * whatever its size. Read it from one thread; closing it before the end stops the query.
 */
public interface RowStream extends AutoCloseable {

  /**
   * The result's columns (names and ClickHouse types); empty for a statement without a result set.
   */
  List<QueryResult.Column> columns();

  /**
   * The next row, or null when the result has ended. A failure midway is a {@link StoreException}.
   */
  List<String> next();

  /**
   * Whether {@link #next()} can answer without waiting for the engine or the server (the rows of a
   * block already here): a reader flushes what it wrote before it waits.
   */
  boolean rowReady();

  /** Stops the query if it is still running and frees what the stream holds. */
  @Override
  void close();

  /** A result already whole, as a stream. */
  static RowStream of(QueryResult result) {
    Iterator<List<String>> rows = result.rows().iterator();
    return new RowStream() {
      @Override
      public List<QueryResult.Column> columns() {
        return result.columns();
      }

      @Override
      public List<String> next() {
        return rows.hasNext() ? rows.next() : null;
      }

      @Override
      public boolean rowReady() {
        return true;
      }

      @Override
      public void close() {}
    };
  }
}
