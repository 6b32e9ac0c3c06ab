package dev.llmlat.store;

import java.util.List;
import java.util.Map;

/**
 * A ClickHouse database: the embedded engine ({@link EmbeddedClickHouse}) or a server reached
 * through the official driver ({@link JdbcClickHouse}). The same DDL and SQL run on both.
 *
 * <p>Implementations are safe for use by several threads. Close them to release the data directory
 * (embedded) or the connection pool (server).
 */
public interface ClickHouseStore extends AutoCloseable {

  /** Runs one statement that returns no rows (DDL, {@code INSERT ... VALUES}, {@code SET}). */
  void execute(String sql);

  /** Runs one query and returns all its rows as text, with column names and types. */
  default QueryResult query(String sql) {
    return query(sql, Map.of());
  }

  /**
   * Like {@link #query(String)} with ClickHouse query parameters: each {@code {name:Type}} in
   * {@code sql} takes its value from {@code params} ({@link QueryParameters}), which the engine
   * parses as a value of that type, never as SQL. Every value that comes from a user goes this way.
   */
  QueryResult query(String sql, Map<String, ?> params);

  /**
   * Runs one query and hands its rows over as they arrive, holding one block of them at a time: for
   * results of any size ({@code llmlat sql}). Close the stream to stop the query early. Statements
   * the engine cannot stream (anything but {@code SELECT} and {@code WITH}, or with a FORMAT clause
   * of their own) run whole, as {@link #query(String, Map)} does.
   */
  default RowStream stream(String sql, Map<String, ?> params) {
    return RowStream.of(query(sql, params));
  }

  /**
   * Runs one query and returns its rows in {@code RowBinary} (no names, no types: the caller knows
   * its columns). For bulk reads, where text rendering and re-parsing would dominate.
   */
  default byte[] queryRowBinary(String sql) {
    return queryRowBinary(sql, Map.of());
  }

  /** {@link #queryRowBinary(String)} with query parameters, as {@link #query(String, Map)}. */
  byte[] queryRowBinary(String sql, Map<String, ?> params);

  /**
   * Inserts rows already encoded in ClickHouse's {@code RowBinary} format into {@code table}'s
   * {@code columns} (in that order). A non-null {@code deduplicationToken} makes a retried insert
   * of the same batch a no-op on tables that keep a deduplication window.
   */
  void insertRowBinary(String table, List<String> columns, byte[] rows, String deduplicationToken);

  /** Where this store lives, for messages: never contains credentials. */
  String description();

  @Override
  void close();
}
