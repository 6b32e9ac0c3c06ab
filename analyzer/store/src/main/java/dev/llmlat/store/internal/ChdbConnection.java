package dev.llmlat.store.internal;

import dev.llmlat.runtime.process.ExitSequence;
import dev.llmlat.store.StoreException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/**
 * One chDB connection: one engine session with its own settings, query parameters, current database
 * and temporary tables (measured on chDB 26.5.3). A process may hold several connections to one
 * data directory at once, and they run queries concurrently; a different directory needs every
 * connection closed first. Calls on one connection are serialized: the engine runs one statement at
 * a time per connection.
 */
public final class ChdbConnection implements AutoCloseable {
  private static Path openPath; // guarded by ChdbConnection.class
  private static int openCount; // guarded by ChdbConnection.class
  private static java.util.List<String>
      openArgs; // guarded by ChdbConnection.class: the engine boots with the first one's

  private final ChdbLibrary lib;
  private final Path dataDir;
  private ExitSequence.Step atExit;
  private MemorySegment conn; // chdb_connection*
  private MemorySegment handle; // *conn
  private ResultStream active; // the stream open on this connection, if any

  private ChdbConnection(ChdbLibrary lib, Path dataDir, MemorySegment conn) {
    this.lib = lib;
    this.dataDir = dataDir;
    this.conn = conn;
    this.handle = conn.reinterpret(ValueLayout.ADDRESS.byteSize()).get(ValueLayout.ADDRESS, 0);
  }

  /** A query the engine refused: its message is ClickHouse's ("Code: 62. DB::Exception: ..."). */
  public static final class QueryFailure extends Exception {
    private static final long serialVersionUID = 1L;

    public QueryFailure(String message) {
      super(message);
    }

    /** ClickHouse's numeric error code, or 1000 when the message has none. */
    public int code() {
      String m = getMessage();
      if (m.startsWith("Code: ")) {
        int end = m.indexOf('.', 6);
        try {
          return Integer.parseInt(m.substring(6, end));
        } catch (RuntimeException e) {
          return 1000;
        }
      }
      return 1000;
    }
  }

  /** The result of one query: its bytes and how many rows it read. */
  public record Result(byte[] bytes, long rowsRead) {}

  /** Opens a connection to {@code dataDir}; the first one in the process boots the engine there. */
  public static ChdbConnection open(ChdbLibrary lib, Path dataDir) {
    return open(lib, dataDir, java.util.List.of());
  }

  /**
   * Opens a connection to {@code dataDir} with more engine arguments ({@code --config-file=...}).
   * The engine boots with the first connection's arguments and keeps them until the last one
   * closes, so a connection asking for other arguments meanwhile is refused rather than given an
   * engine configured otherwise (measured: chDB ignores a later connection's configuration).
   */
  public static ChdbConnection open(
      ChdbLibrary lib, Path dataDir, java.util.List<String> engineArgs) {
    synchronized (ChdbConnection.class) {
      if (openPath != null && openPath.equals(dataDir) && !openArgs.equals(engineArgs)) {
        throw new StoreException(
            "the embedded store at "
                + dataDir
                + " is already open in this process with "
                + (openArgs.isEmpty() ? "the engine's full access" : "engine arguments " + openArgs)
                + "; close it before opening it with "
                + (engineArgs.isEmpty() ? "full access" : engineArgs));
      }
      if (openPath != null && !openPath.equals(dataDir)) {
        throw new StoreException(
            "an embedded store is already open in this process at "
                + openPath
                + "; chDB allows one data directory per process: close it before opening "
                + dataDir);
      }
      try (Arena arena = Arena.ofConfined()) {
        java.util.List<String> all =
            new java.util.ArrayList<>(java.util.List.of("clickhouse", "--path=" + dataDir));
        all.addAll(engineArgs);
        String[] args = all.toArray(String[]::new);
        MemorySegment argv = arena.allocate(ValueLayout.ADDRESS, args.length);
        for (int i = 0; i < args.length; i++) {
          argv.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(args[i]));
        }
        // The engine's own crash handlers would take over SIGSEGV, which the JVM uses for implicit
        // null checks; the JVM keeps its handlers (libjsig chains any that slip through).
        lib.setSignalHandlersEnabled.invokeExact(0);
        MemorySegment conn = (MemorySegment) lib.connect.invokeExact(args.length, argv);
        if (conn.address() == 0) {
          throw new StoreException(
              "the embedded ClickHouse engine could not open its data directory "
                  + dataDir
                  + " (locked by another process, or not writable; the engine's own message is above)");
        }
        openPath = dataDir;
        openArgs = java.util.List.copyOf(engineArgs);
        openCount++;
        ChdbConnection connection = new ChdbConnection(lib, dataDir, conn);
        // the engine's native threads must stop before the C runtime's exit handlers destroy what
        // they use (else SIGSEGV at exit); a statement still running is abandoned after a while
        connection.atExit =
            ExitSequence.registerNative(
                "closing the store at " + dataDir, connection::close, CLOSE_AT_EXIT_MS);
        return connection;
      } catch (StoreException e) {
        throw e;
      } catch (Throwable t) {
        throw new StoreException("chdb_connect failed for " + dataDir + ": " + t, t);
      }
    }
  }

  /**
   * How long the exit waits for a running statement before it leaves without closing the engine.
   */
  private static final long CLOSE_AT_EXIT_MS = 3_000;

  /** Runs one statement; {@code format} is the default output format (a FORMAT clause wins). */
  public Result query(byte[] sql, String format) throws QueryFailure {
    try (NativeResult result = execute(sql, format, Map.of())) {
      return new Result(result.bytes(), result.stats().resultRows());
    }
  }

  /**
   * Runs one statement with query parameters bound for this call only. The engine clears every
   * parameter on return, those the session had SET included, so without parameters of its own a
   * statement runs through the plain call and sees the session's. The result stays in native memory
   * until closed.
   */
  public synchronized NativeResult execute(byte[] sql, String format, Map<String, String> params)
      throws QueryFailure {
    MemorySegment h = handle();
    try (Arena arena = Arena.ofConfined()) {
      Call call = new Call(arena, sql, format, params);
      MemorySegment result =
          params.isEmpty()
              ? (MemorySegment)
                  lib.queryN.invokeExact(
                      h, call.sql, call.sqlLength, call.format, call.formatLength)
              : (MemorySegment)
                  lib.queryWithParamsN.invokeExact(
                      h,
                      call.sql,
                      call.sqlLength,
                      call.format,
                      call.formatLength,
                      call.names,
                      call.nameLengths,
                      call.values,
                      call.valueLengths,
                      call.count);
      return NativeResult.checked(lib, result);
    } catch (QueryFailure | StoreException e) {
      throw e;
    } catch (Throwable t) {
      throw new StoreException("chdb query failed on " + dataDir + ": " + t, t);
    }
  }

  /**
   * Starts a query whose result the caller fetches chunk by chunk. The engine streams SELECTs only
   * (other statements fail with code 36); each chunk is a complete output of its own in the format,
   * so only formats without a header or footer concatenate into one result.
   */
  public synchronized ResultStream stream(byte[] sql, String format, Map<String, String> params)
      throws QueryFailure {
    MemorySegment h = handle();
    try (Arena arena = Arena.ofConfined()) {
      Call call = new Call(arena, sql, format, params);
      MemorySegment stream =
          params.isEmpty()
              ? (MemorySegment)
                  lib.streamQueryN.invokeExact(
                      h, call.sql, call.sqlLength, call.format, call.formatLength)
              : (MemorySegment)
                  lib.streamQueryWithParamsN.invokeExact(
                      h,
                      call.sql,
                      call.sqlLength,
                      call.format,
                      call.formatLength,
                      call.names,
                      call.nameLengths,
                      call.values,
                      call.valueLengths,
                      call.count);
      if (stream.address() == 0) {
        throw new QueryFailure(
            "Code: 1000. DB::Exception: chDB returned no stream. (UNKNOWN_EXCEPTION)");
      }
      String error = NativeResult.error(lib, stream);
      if (error != null) {
        lib.destroyResult.invokeExact(stream);
        throw new QueryFailure(error);
      }
      active = new ResultStream(this, stream);
      return active;
    } catch (QueryFailure | StoreException e) {
      throw e;
    } catch (Throwable t) {
      throw new StoreException("chdb stream failed on " + dataDir + ": " + t, t);
    }
  }

  synchronized NativeResult fetch(MemorySegment stream) throws QueryFailure {
    MemorySegment h = handle();
    try {
      return NativeResult.checked(
          lib, (MemorySegment) lib.streamFetchResult.invokeExact(h, stream));
    } catch (QueryFailure | StoreException e) {
      throw e;
    } catch (Throwable t) {
      throw new StoreException("chdb fetch failed on " + dataDir + ": " + t, t);
    }
  }

  synchronized void cancel(MemorySegment stream) {
    try {
      lib.streamCancelQuery.invokeExact(handle(), stream);
    } catch (Throwable t) {
      throw new StoreException("chdb cancel failed on " + dataDir + ": " + t, t);
    }
  }

  synchronized void streamClosed(ResultStream stream) {
    if (active == stream) {
      active = null;
    }
  }

  void destroy(MemorySegment stream) {
    try {
      lib.destroyQueryResult(stream);
    } catch (Throwable t) {
      throw new StoreException("chdb destroy failed on " + dataDir + ": " + t, t);
    }
  }

  private MemorySegment handle() {
    if (handle == null) {
      throw new StoreException("embedded store at " + dataDir + " is closed");
    }
    return handle;
  }

  /** The native arguments of one call: the SQL, the format and the parameters as byte arrays. */
  private static final class Call {
    final MemorySegment sql;
    final long sqlLength;
    final MemorySegment format;
    final long formatLength;
    final MemorySegment names;
    final MemorySegment nameLengths;
    final MemorySegment values;
    final MemorySegment valueLengths;
    final long count;

    Call(Arena arena, byte[] sqlBytes, String formatName, Map<String, String> params) {
      sql = arena.allocate(sqlBytes.length + 1L);
      MemorySegment.copy(sqlBytes, 0, sql, ValueLayout.JAVA_BYTE, 0, sqlBytes.length);
      sqlLength = sqlBytes.length;
      format = arena.allocateFrom(formatName);
      formatLength = formatName.getBytes(StandardCharsets.US_ASCII).length;
      count = params.size();
      long slots = Math.max(1, count);
      names = arena.allocate(ValueLayout.ADDRESS, slots);
      values = arena.allocate(ValueLayout.ADDRESS, slots);
      nameLengths = arena.allocate(ValueLayout.JAVA_LONG, slots);
      valueLengths = arena.allocate(ValueLayout.JAVA_LONG, slots);
      int i = 0;
      for (Map.Entry<String, String> p : params.entrySet()) {
        byte[] name = p.getKey().getBytes(StandardCharsets.UTF_8);
        byte[] value = p.getValue().getBytes(StandardCharsets.UTF_8);
        names.setAtIndex(ValueLayout.ADDRESS, i, bytes(arena, name));
        values.setAtIndex(ValueLayout.ADDRESS, i, bytes(arena, value));
        nameLengths.setAtIndex(ValueLayout.JAVA_LONG, i, name.length);
        valueLengths.setAtIndex(ValueLayout.JAVA_LONG, i, value.length);
        i++;
      }
    }

    private static MemorySegment bytes(Arena arena, byte[] b) {
      MemorySegment s = arena.allocate(b.length + 1L);
      MemorySegment.copy(b, 0, s, ValueLayout.JAVA_BYTE, 0, b.length);
      return s;
    }
  }

  @Override
  public void close() {
    synchronized (ChdbConnection.class) {
      synchronized (this) {
        if (conn == null) {
          return;
        }
        if (atExit != null) {
          atExit.close();
        }
        try {
          if (active != null) {
            active.abandon(); // a result still being read (the process exits on a signal): stopped
            // first
          }
        } catch (RuntimeException e) {
          // closing the connection matters more
        }
        try {
          lib.closeConn.invokeExact(conn);
        } catch (Throwable t) {
          throw new StoreException("chdb_close_conn failed for " + dataDir + ": " + t, t);
        } finally {
          conn = null;
          handle = null;
          if (--openCount == 0) {
            openPath = null;
            openArgs = null;
          }
        }
      }
    }
  }
}
