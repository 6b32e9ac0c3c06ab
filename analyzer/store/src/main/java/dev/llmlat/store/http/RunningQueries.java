package dev.llmlat.store.http;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The queries running now, by the id the client knows them by (its {@code query_id}, or the one the
 * server made up and sent back in {@code X-ClickHouse-Query-Id}): so a second query cannot take a
 * running query's id, and KILL QUERY can find them.
 */
final class RunningQueries {
  private final Map<String, Running> byId = new ConcurrentHashMap<>();
  private final Killer killer;

  /** Stops an engine query by its marker ({@code log_comment}). */
  interface Killer {
    void kill(String marker);
  }

  RunningQueries(Killer killer) {
    this.killer = killer;
  }

  /** One running query. */
  final class Running {
    final String queryId;
    final String sql;
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile String marker;
    private volatile boolean cancelled;

    Running(String queryId, String sql) {
      this.queryId = queryId;
      this.sql = sql;
    }

    /** The engine session now running it is known (until then there is nothing to kill). */
    void runsAs(String engineMarker) {
      marker = engineMarker;
      if (cancelled) {
        killer.kill(engineMarker);
      }
    }

    boolean cancelled() {
      return cancelled;
    }

    /** Stops it: the engine query is killed; the thread serving it sees {@link #cancelled()}. */
    void cancel() {
      if (cancelled) {
        return;
      }
      cancelled = true;
      String m = marker;
      if (m != null) {
        killer.kill(m);
      }
    }

    boolean awaitEnd(Duration timeout) throws InterruptedException {
      return done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    void end() {
      byId.remove(queryId, this);
      done.countDown();
    }
  }

  /** Registers a query; null when one with the same id runs (and {@code replace} is off). */
  Running start(String queryId, String sql, boolean replace) throws InterruptedException {
    Running mine = new Running(queryId, sql);
    Running other = byId.putIfAbsent(queryId, mine);
    if (other == null) {
      return mine;
    }
    if (!replace) {
      return null;
    }
    other.cancel();
    other.awaitEnd(Duration.ofSeconds(30));
    return byId.putIfAbsent(queryId, mine) == null ? mine : null;
  }

  Running find(String queryId) {
    return byId.get(queryId);
  }

  int count() {
    return byId.size();
  }

  /** Stops every running query (the server is closing). */
  void cancelAll() {
    byId.values().forEach(Running::cancel);
  }
}
