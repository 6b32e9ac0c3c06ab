package dev.llmlat.store.http;

import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.internal.ChdbConnection;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Engine sessions for requests without a {@code session_id}. A session goes back to the pool only
 * as clean as it came (the request changed nothing that outlives it); any other is closed, so no
 * request ever sees what another one set. Kept per {@code readonly} level, which a session cannot
 * lower once set.
 */
final class ConnectionPool implements AutoCloseable {
  private static final int IDLE_PER_LEVEL = 8;

  private final EmbeddedClickHouse store;
  private final List<Deque<EngineConnection>> idle =
      List.of(new ArrayDeque<>(), new ArrayDeque<>(), new ArrayDeque<>());
  private boolean closed; // guarded by this

  ConnectionPool(EmbeddedClickHouse store) {
    this.store = store;
  }

  EngineConnection take(int readonly) throws ChdbConnection.QueryFailure {
    synchronized (this) {
      EngineConnection c = idle.get(readonly).pollFirst();
      if (c != null) {
        return c;
      }
    }
    return EngineConnection.open(store, readonly); // ≈15 ms; outside the lock
  }

  /** Returns {@code c}; {@code clean} false closes it instead. */
  void give(EngineConnection c, boolean clean) {
    synchronized (this) {
      if (clean && !closed && idle.get(c.readonly).size() < IDLE_PER_LEVEL) {
        idle.get(c.readonly).addFirst(c);
        return;
      }
    }
    discard(c);
  }

  void discard(EngineConnection c) {
    try {
      store.closeSession(c.chdb);
    } catch (RuntimeException ignored) {
      // the store is closing anyway
    }
  }

  @Override
  public void close() {
    List<EngineConnection> all = new ArrayList<>();
    synchronized (this) {
      closed = true;
      idle.forEach(all::addAll);
      idle.forEach(Deque::clear);
    }
    all.forEach(this::discard);
  }
}
