package dev.llmlat.store.http;

import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.internal.ChdbConnection;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * One engine session serving HTTP requests. Its {@code log_comment} is a marker unique to it, so
 * the query it runs can be found in {@code system.processes} and killed: the engine gives queries
 * ids of its own and takes none from the client.
 */
final class EngineConnection {
  final ChdbConnection chdb;
  final String marker;
  final int readonly;

  private EngineConnection(ChdbConnection chdb, String marker, int readonly) {
    this.chdb = chdb;
    this.marker = marker;
    this.readonly = readonly;
  }

  /**
   * Opens a session; {@code readonly} 1 or 2 is set for good (the engine never lowers it again).
   */
  static EngineConnection open(EmbeddedClickHouse store, int readonly)
      throws ChdbConnection.QueryFailure {
    ChdbConnection chdb = store.openSession();
    String marker = "llmlat-http-" + UUID.randomUUID();
    try {
      run(chdb, "SET log_comment = '" + marker + "'");
      if (readonly > 0) {
        run(chdb, "SET readonly = " + readonly);
      }
      return new EngineConnection(chdb, marker, readonly);
    } catch (ChdbConnection.QueryFailure | RuntimeException e) {
      store.closeSession(chdb);
      throw e;
    }
  }

  void run(String sql) throws ChdbConnection.QueryFailure {
    run(chdb, sql);
  }

  /** The first line of a one-value answer. */
  String single(String sql) throws ChdbConnection.QueryFailure {
    String text =
        new String(
            chdb.query(sql.getBytes(StandardCharsets.UTF_8), "TabSeparatedRaw").bytes(),
            StandardCharsets.UTF_8);
    int nl = text.indexOf('\n');
    return nl < 0 ? text : text.substring(0, nl);
  }

  String text(String sql) throws ChdbConnection.QueryFailure {
    return new String(
        chdb.query(sql.getBytes(StandardCharsets.UTF_8), "TabSeparated").bytes(),
        StandardCharsets.UTF_8);
  }

  private static void run(ChdbConnection chdb, String sql) throws ChdbConnection.QueryFailure {
    chdb.query(sql.getBytes(StandardCharsets.UTF_8), "TabSeparated");
  }

  /** A string literal in ClickHouse's SQL. */
  static String quote(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
