package dev.llmlat.store.http;

import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.internal.ChdbConnection;

/**
 * Kills engine queries from a session of its own, outside the concurrency limit, so a cancellation
 * never waits behind the queries it is meant to stop. Always ASYNC: chDB 26.5's KILL QUERY ... SYNC
 * waits forever and stalls the query it kills (measured).
 */
final class Killer implements RunningQueries.Killer, AutoCloseable {
  private final EmbeddedClickHouse store;
  private ChdbConnection control; // guarded by this

  Killer(EmbeddedClickHouse store) {
    this.store = store;
  }

  @Override
  public synchronized void kill(String marker) {
    try {
      if (control == null) {
        control = store.openSession();
      }
      control.query(
          ("KILL QUERY WHERE Settings['log_comment'] = "
                  + EngineConnection.quote(marker)
                  + " ASYNC")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8),
          "TabSeparated");
    } catch (ChdbConnection.QueryFailure | RuntimeException e) {
      // the query ended meanwhile, or the store is closing: nothing left to stop
    }
  }

  @Override
  public synchronized void close() {
    if (control != null) {
      try {
        store.closeSession(control);
      } catch (RuntimeException ignored) {
        // closing anyway
      }
      control = null;
    }
  }
}
