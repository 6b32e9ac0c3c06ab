package dev.llmlat.store.internal;

import dev.llmlat.process.ExitSequence;
import dev.llmlat.store.StoreException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * One chDB connection. chDB allows one open connection per process, so this class enforces it;
 * calls are serialized because the engine's session is not safe for concurrent queries.
 */
public final class ChdbConnection implements AutoCloseable {
  private static Path openPath; // guarded by ChdbConnection.class

  private final ChdbLibrary lib;
  private final Path dataDir;
  private ExitSequence.Step atExit;
  private MemorySegment conn; // chdb_connection*
  private MemorySegment handle; // *conn

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

  public static ChdbConnection open(ChdbLibrary lib, Path dataDir) {
    synchronized (ChdbConnection.class) {
      if (openPath != null) {
        throw new StoreException(
            "an embedded store is already open in this process at "
                + openPath
                + "; chDB allows one per process: close it before opening "
                + dataDir);
      }
      try (Arena arena = Arena.ofConfined()) {
        String[] args = {"clickhouse", "--path=" + dataDir};
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
        ChdbConnection connection = new ChdbConnection(lib, dataDir, conn);
        // the engine's native threads must stop before the C runtime's exit handlers destroy what
        // they use (else SIGSEGV at exit); a statement still running is abandoned after a while
        connection.atExit = ExitSequence.registerNative("closing the store at " + dataDir, connection::close, CLOSE_AT_EXIT_MS);
        return connection;
      } catch (StoreException e) {
        throw e;
      } catch (Throwable t) {
        throw new StoreException("chdb_connect failed for " + dataDir + ": " + t, t);
      }
    }
  }

  /** How long the exit waits for a running statement before it leaves without closing the engine. */
  private static final long CLOSE_AT_EXIT_MS = 3_000;

  /** Runs one statement; {@code format} is the default output format (a FORMAT clause wins). */
  public synchronized Result query(byte[] sql, String format) throws QueryFailure {
    if (handle == null) {
      throw new StoreException("embedded store at " + dataDir + " is closed");
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment text = arena.allocate(sql.length + 1L);
      MemorySegment.copy(sql, 0, text, ValueLayout.JAVA_BYTE, 0, sql.length);
      byte[] fmt = format.getBytes(StandardCharsets.US_ASCII);
      MemorySegment fmtSeg = arena.allocateFrom(format);
      MemorySegment result =
          (MemorySegment) lib.queryN.invokeExact(handle, text, (long) sql.length, fmtSeg, (long) fmt.length);
      if (result.address() == 0) {
        throw new QueryFailure("Code: 1000. DB::Exception: chDB returned no result");
      }
      try {
        MemorySegment error = (MemorySegment) lib.resultError.invokeExact(result);
        if (error.address() != 0) {
          throw new QueryFailure(error.reinterpret(Integer.MAX_VALUE).getString(0).strip());
        }
        long length = (long) lib.resultLength.invokeExact(result);
        byte[] bytes = new byte[Math.toIntExact(length)];
        if (length > 0) {
          MemorySegment buffer = (MemorySegment) lib.resultBuffer.invokeExact(result);
          MemorySegment.copy(buffer.reinterpret(length), ValueLayout.JAVA_BYTE, 0, bytes, 0, bytes.length);
        }
        long rowsRead = (long) lib.resultRowsRead.invokeExact(result);
        return new Result(bytes, rowsRead);
      } finally {
        lib.destroyResult.invokeExact(result);
      }
    } catch (QueryFailure | StoreException e) {
      throw e;
    } catch (Throwable t) {
      throw new StoreException("chdb query failed on " + dataDir + ": " + t, t);
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
          lib.closeConn.invokeExact(conn);
        } catch (Throwable t) {
          throw new StoreException("chdb_close_conn failed for " + dataDir + ": " + t, t);
        } finally {
          conn = null;
          handle = null;
          openPath = null;
        }
      }
    }
  }
}
