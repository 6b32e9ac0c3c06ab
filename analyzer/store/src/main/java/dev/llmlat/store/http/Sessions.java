package dev.llmlat.store.http;

import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.internal.ChdbConnection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * ClickHouse's HTTP sessions ({@code session_id}): each is an engine session of its own, so its
 * SET, USE and temporary tables stay in it; one request at a time uses it (another one meanwhile is
 * refused, as ClickHouse does); it closes after {@code session_timeout} seconds idle.
 */
final class Sessions implements AutoCloseable {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9_.:\\-]{1,128}");

  private final EmbeddedClickHouse store;
  private final int max;
  private final Duration defaultTimeout;
  private final Duration maxTimeout;
  private final Map<String, Session> sessions = new HashMap<>(); // guarded by this

  /** One open session. */
  static final class Session {
    final String id;
    final EngineConnection connection;
    Duration timeout;
    long idleSince; // nanoTime when last released
    boolean inUse;

    Session(String id, EngineConnection connection, Duration timeout) {
      this.id = id;
      this.connection = connection;
      this.timeout = timeout;
    }
  }

  /** A session, or the error that refuses the request. */
  record Lease(Session session, ClickHouseError error) {}

  Sessions(EmbeddedClickHouse store, int max, Duration defaultTimeout, Duration maxTimeout) {
    this.store = store;
    this.max = max;
    this.defaultTimeout = defaultTimeout;
    this.maxTimeout = maxTimeout;
  }

  /**
   * Takes session {@code id} for one request, creating it unless {@code check} says it must exist.
   */
  Lease take(String id, String timeoutText, boolean check) throws ChdbConnection.QueryFailure {
    if (!ID.matcher(id).matches()) {
      return new Lease(
          null,
          ClickHouseError.of(
              ClickHouseError.BAD_ARGUMENTS,
              "Invalid session_id: use 1 to 128 letters, digits and _ . : -"));
    }
    Duration timeout = defaultTimeout;
    if (timeoutText != null && !timeoutText.isEmpty()) {
      try {
        timeout = Duration.ofSeconds(Long.parseLong(timeoutText));
      } catch (NumberFormatException e) {
        return new Lease(
            null,
            ClickHouseError.of(
                ClickHouseError.INVALID_SESSION_TIMEOUT,
                "Invalid session timeout: '" + timeoutText + "'"));
      }
      if (timeout.isNegative() || timeout.compareTo(maxTimeout) > 0) {
        return new Lease(
            null,
            ClickHouseError.of(
                ClickHouseError.INVALID_SESSION_TIMEOUT,
                "Session timeout "
                    + timeout.toSeconds()
                    + " is not in [0, "
                    + maxTimeout.toSeconds()
                    + "]"));
      }
    }
    synchronized (this) {
      expire();
      Session s = sessions.get(id);
      if (s != null) {
        if (s.inUse) {
          return new Lease(
              null,
              ClickHouseError.of(
                  ClickHouseError.SESSION_IS_LOCKED,
                  "Session " + id + " is locked by a concurrent client"));
        }
        s.inUse = true;
        s.timeout = timeout;
        return new Lease(s, null);
      }
      if (check) {
        return new Lease(
            null,
            ClickHouseError.of(ClickHouseError.SESSION_NOT_FOUND, "Session " + id + " not found"));
      }
      if (sessions.size() >= max) {
        return new Lease(
            null,
            ClickHouseError.of(
                ClickHouseError.TOO_MANY_SIMULTANEOUS_QUERIES,
                "Too many open sessions (" + max + "); close some or let them time out"));
      }
    }
    EngineConnection connection = EngineConnection.open(store, 0);
    synchronized (this) {
      Session raced = sessions.get(id);
      if (raced != null) { // another request opened it meanwhile
        store.closeSession(connection.chdb);
        return new Lease(
            null,
            ClickHouseError.of(
                ClickHouseError.SESSION_IS_LOCKED,
                "Session " + id + " is locked by a concurrent client"));
      }
      Session s = new Session(id, connection, timeout);
      s.inUse = true;
      sessions.put(id, s);
      return new Lease(s, null);
    }
  }

  /** Ends one request's use; {@code broken} closes the session (its engine state is unknown). */
  void give(Session s, boolean broken) {
    boolean close;
    synchronized (this) {
      s.inUse = false;
      s.idleSince = System.nanoTime();
      close = broken || s.timeout.isZero();
      if (close) {
        sessions.remove(s.id);
      }
    }
    if (close) {
      store.closeSession(s.connection.chdb);
    }
  }

  synchronized int open() {
    return sessions.size();
  }

  /** Closes sessions idle past their timeout; called on every take and by the server's timer. */
  void expire() {
    List<Session> expired = new ArrayList<>();
    synchronized (this) {
      long now = System.nanoTime();
      sessions
          .values()
          .removeIf(
              s -> {
                boolean gone = !s.inUse && now - s.idleSince > s.timeout.toNanos();
                if (gone) {
                  expired.add(s);
                }
                return gone;
              });
    }
    expired.forEach(s -> store.closeSession(s.connection.chdb));
  }

  @Override
  public void close() {
    List<Session> all;
    synchronized (this) {
      all = new ArrayList<>(sessions.values());
      sessions.clear();
    }
    for (Session s : all) {
      try {
        store.closeSession(s.connection.chdb);
      } catch (RuntimeException ignored) {
        // closing anyway
      }
    }
  }
}
