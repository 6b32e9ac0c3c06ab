package dev.llmlat.store;

import dev.llmlat.store.internal.ChdbConnection;
import dev.llmlat.store.internal.ChdbLibrary;
import dev.llmlat.store.internal.InsertFromFile;
import dev.llmlat.store.internal.NativeResult;
import dev.llmlat.store.internal.ResultStream;
import dev.llmlat.store.internal.SqlText;
import dev.llmlat.store.internal.TabSeparatedDecoder;
import dev.llmlat.store.internal.TabSeparatedRows;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The ClickHouse engine in this process (chDB through {@code java.lang.foreign}), owning one data
 * directory. Data persists across restarts. One process owns a data directory at a time: a second
 * opener gets a message naming the owner's pid.
 */
public final class EmbeddedClickHouse implements ClickHouseStore {
  private static final String LOCK_FILE = "llmlat.lock";

  /** Stores being opened by {@link #openAhead}, by data directory and library. */
  private static final Map<String, CompletableFuture<EmbeddedClickHouse>> AHEAD =
      new ConcurrentHashMap<>();

  private final Path dataDir;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final ChdbConnection connection;
  private final ChdbLibrary library;
  private final java.util.Set<ChdbConnection> sessions =
      new java.util.HashSet<>(); // guarded by itself
  private boolean closed; // guarded by sessions
  private final Map<String, String> structures = new java.util.concurrent.ConcurrentHashMap<>();
  private final List<String> engineArgs;
  private final dev.llmlat.store.confine.Confinement confinement; // null: the engine's full access

  private EmbeddedClickHouse(
      Path dataDir,
      FileChannel lockChannel,
      FileLock lock,
      ChdbLibrary library,
      ChdbConnection connection,
      List<String> engineArgs,
      dev.llmlat.store.confine.Confinement confinement) {
    this.dataDir = dataDir;
    this.engineArgs = engineArgs;
    this.confinement = confinement;
    this.library = library;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.connection = connection;
  }

  /**
   * Loads the engine at {@code library} and binds its functions (a quarter of a second), so that a
   * later {@link #open} with the same library skips that; safe to call from any thread, once or
   * more. Failures are left for {@link #open} to report.
   */
  public static void preload(Path library) {
    try {
      ChdbLibrary.load(library);
    } catch (RuntimeException e) {
      // open says what is wrong, on the thread that can report it
    }
  }

  /**
   * Starts opening the store in {@code dataDir} on a thread of its own, then runs {@code prepare}
   * on it there (a schema check, say), and returns at once; the next {@link #open} of that store in
   * this process waits for it and takes it, so a command can parse its arguments while the engine
   * starts. Call it before any {@code open} of the same store. Failures are left for {@code open},
   * which tries again and reports them; a store opened ahead and never taken is closed at exit like
   * any other.
   */
  public static void openAhead(
      Path dataDir, Path library, Consumer<? super EmbeddedClickHouse> prepare) {
    String key = aheadKey(dataDir, library);
    CompletableFuture<EmbeddedClickHouse> opening = new CompletableFuture<>();
    if (AHEAD.putIfAbsent(key, opening) != null) {
      return;
    }
    Thread thread =
        new Thread(
            () -> {
              EmbeddedClickHouse store = null;
              try {
                store = openNow(dataDir, library);
                prepare.accept(store);
                opening.complete(store);
              } catch (RuntimeException e) {
                if (store != null) {
                  store.close(); // open starts again and meets the failure itself
                }
                opening.completeExceptionally(e);
              }
            },
            "llmlat-store-open-ahead");
    thread.setDaemon(true);
    thread.start();
  }

  private static String aheadKey(Path dataDir, Path library) {
    return dataDir.toAbsolutePath().normalize() + "\0" + library.toAbsolutePath().normalize();
  }

  /** Opens (creating if needed) the store in {@code dataDir} with the engine at {@code library}. */
  public static EmbeddedClickHouse open(Path dataDir, Path library) {
    CompletableFuture<EmbeddedClickHouse> ahead = AHEAD.remove(aheadKey(dataDir, library));
    if (ahead != null) {
      try {
        return ahead.join();
      } catch (CompletionException e) {
        // opened again below, which says what is wrong
      }
    }
    return openNow(dataDir, library, null);
  }

  /**
   * Opens the store in {@code dataDir} for clients other than this process's own code (the process
   * {@code store serve} runs): the engine boots with its own access control for {@code confinement}
   * ({@link dev.llmlat.store.confine.EngineAccessConfig}), for this process's every session, until
   * the store is closed.
   */
  public static EmbeddedClickHouse openConfined(
      Path dataDir, Path library, dev.llmlat.store.confine.Confinement confinement) {
    return openNow(dataDir, library, java.util.Objects.requireNonNull(confinement, "confinement"));
  }

  /**
   * How this store's engine confines its sessions, or null where it has its full access (the user's
   * own process).
   */
  public dev.llmlat.store.confine.Confinement confinement() {
    return confinement;
  }

  private static EmbeddedClickHouse openNow(Path dataDir, Path library) {
    return openNow(dataDir, library, null);
  }

  private static EmbeddedClickHouse openNow(
      Path dataDir, Path library, dev.llmlat.store.confine.Confinement confinement) {
    ChdbLibrary lib = ChdbLibrary.load(library);
    Path dir = dataDir.toAbsolutePath().normalize();
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new StoreException(
          "cannot create the embedded store's data directory " + dir + ": " + e, e);
    }
    Path lockPath = dir.resolve(LOCK_FILE);
    FileChannel channel = null;
    FileLock lock = null;
    try {
      channel =
          FileChannel.open(
              lockPath,
              StandardOpenOption.CREATE,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE);
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        String owner = new String(Files.readAllBytes(lockPath), StandardCharsets.UTF_8).strip();
        channel.close();
        throw new StoreException(
            "the embedded store at "
                + dir
                + " is in use by another process"
                + (owner.isEmpty() ? "" : " (pid " + owner + ")")
                + ": stop it (llmlat services down) or use another --data-dir");
      }
      channel.truncate(0);
      channel.write(
          ByteBuffer.wrap(
              Long.toString(ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8)),
          0);
      channel.force(false);
      List<String> args = confinement == null ? List.of() : accessConfig(dir, confinement);
      ChdbConnection connection = ChdbConnection.open(lib, dir, args);
      return new EmbeddedClickHouse(dir, channel, lock, lib, connection, args, confinement);
    } catch (IOException e) {
      closeQuietly(channel);
      throw new StoreException(
          "cannot lock the embedded store's data directory " + dir + ": " + e, e);
    } catch (RuntimeException e) {
      if (lock != null) {
        closeQuietly(channel);
      }
      throw e;
    }
  }

  private static List<String> accessConfig(
      Path dir, dev.llmlat.store.confine.Confinement confinement) {
    try {
      return dev.llmlat.store.confine.EngineAccessConfig.write(dir, confinement);
    } catch (IOException e) {
      // not the lock's failure: the catch below would say so
      throw new StoreException(
          "cannot write the engine's access configuration under "
              + dir.resolve("llmlat-serve")
              + ": "
              + e,
          e);
    }
  }

  public Path dataDir() {
    return dataDir;
  }

  @Override
  public void execute(String sql) {
    SqlText text = SqlText.of(sql);
    if (text.isInsertWithFormat() && text.hasInlineData()) {
      // the engine reads the data from a file of its own: given inline, it would also take
      // whatever waits on this process's stdin (InsertFromFile says more)
      String insert = sql.substring(0, text.dataOffset());
      insertFromFile(
          sql.substring(text.dataOffset()).getBytes(StandardCharsets.UTF_8),
          file -> {
            String fromFile = InsertFromFile.statement(insert, file, text.format());
            return run(fromFile.getBytes(StandardCharsets.UTF_8), "TabSeparated", insert);
          });
      return;
    }
    run(sql.getBytes(StandardCharsets.UTF_8), "TabSeparated", sql);
  }

  @Override
  public QueryResult query(String sql, Map<String, ?> params) {
    return TabSeparatedDecoder.decode(withParameters(sql, "TabSeparatedWithNamesAndTypes", params));
  }

  /**
   * Streams on an engine session of its own (the engine runs nothing else on a connection while one
   * of its results is read), from {@code chdb_stream_query}: the rows of one block (the engine's
   * chunk, in native memory) at a time. A result without rows is computed again whole, since only a
   * chunk carries the header that names its columns.
   */
  @Override
  public RowStream stream(String sql, Map<String, ?> params) {
    SqlText text = SqlText.of(sql);
    if (!(text.firstWord().equals("SELECT") || text.firstWord().equals("WITH"))
        || text.format() != null
        || text.statements() > 1) {
      return RowStream.of(query(sql, params));
    }
    Map<String, String> bound = new java.util.LinkedHashMap<>();
    params.forEach((k, v) -> bound.put(QueryParameters.name(k), QueryParameters.escaped(v)));
    ChdbConnection session = openSession();
    boolean handedOver = false;
    try {
      ResultStream stream =
          session.stream(
              sql.getBytes(StandardCharsets.UTF_8), "TabSeparatedWithNamesAndTypes", bound);
      NativeResult first;
      try {
        first = stream.next();
      } catch (ChdbConnection.QueryFailure | RuntimeException e) {
        stream.close();
        throw e;
      }
      if (first == null) {
        stream.close();
        return RowStream.of(query(sql, params));
      }
      TabSeparatedRows rows =
          new TabSeparatedRows(
              first.inputStream(),
              new TabSeparatedRows.Chunks() {
                @Override
                public java.io.InputStream next() {
                  try {
                    NativeResult chunk = stream.next();
                    return chunk == null ? null : chunk.inputStream();
                  } catch (ChdbConnection.QueryFailure e) {
                    throw new StoreException(e.getMessage() + "\n  in: " + abbreviate(sql), e);
                  }
                }

                @Override
                public void close(boolean whole) {
                  try {
                    stream.cancel(); // nothing to stop when whole
                    stream.close();
                  } finally {
                    closeSession(session);
                  }
                }
              },
              description());
      handedOver = true;
      return rows;
    } catch (ChdbConnection.QueryFailure e) {
      if (e.code() == 36 && e.getMessage().contains("Streaming query is not supported")) {
        return RowStream.of(query(sql, params));
      }
      throw new StoreException(e.getMessage() + "\n  in: " + abbreviate(sql), e);
    } finally {
      if (!handedOver) {
        closeSession(session);
      }
    }
  }

  @Override
  public byte[] queryRowBinary(String sql, Map<String, ?> params) {
    return withParameters(sql, "RowBinary", params);
  }

  /**
   * Runs {@code sql} with its parameters bound for this call only (the engine takes them beside the
   * statement and forgets them on return), so no other query ever sees them.
   */
  private byte[] withParameters(String sql, String format, Map<String, ?> params) {
    if (params.isEmpty()) {
      SqlText text = SqlText.of(sql);
      if (text.isInsertWithFormat() && text.hasInlineData()) {
        execute(sql); // an INSERT answers nothing; its data must not meet this process's stdin
        return new byte[0];
      }
    }
    Map<String, String> bound = new java.util.LinkedHashMap<>();
    params.forEach((k, v) -> bound.put(QueryParameters.name(k), QueryParameters.escaped(v)));
    try (dev.llmlat.store.internal.NativeResult result =
        connection.execute(sql.getBytes(StandardCharsets.UTF_8), format, bound)) {
      return result.bytes();
    } catch (ChdbConnection.QueryFailure e) {
      // the values are not repeated in a failure message: they may be anything a user typed
      throw new StoreException(e.getMessage() + "\n  in: " + abbreviate(sql), e);
    }
  }

  /**
   * Inserts through {@code INSERT ... SELECT * FROM file(path, 'RowBinary', structure)}: measured
   * three times faster in the engine than {@code FROM INFILE} for the same rows (the file function
   * reads the exact column types, so nothing is converted). Deduplication tokens apply alike.
   */
  @Override
  public void insertRowBinary(
      String table, List<String> columns, byte[] rows, String deduplicationToken) {
    String structure =
        structures.computeIfAbsent(
            table + "|" + String.join(",", columns), k -> structure(table, columns));
    try {
      insertFromFile(
          rows,
          file -> {
            String sql =
                InsertStatements.rowBinaryFromFile(
                    table, columns, quote(file.toString()), quote(structure), deduplicationToken);
            return run(sql.getBytes(StandardCharsets.UTF_8), "TabSeparated", sql);
          });
    } catch (StoreException e) {
      structures
          .clear(); // the table may have changed since its structure was read: read it afresh next
      // time
      throw e;
    }
  }

  /** {@code `col` Type, ...} for the given columns of {@code table}, in the given order. */
  private String structure(String table, List<String> columns) {
    String name = InsertStatements.identifier(table);
    int dot = name.indexOf('.');
    String database = dot < 0 ? "currentDatabase()" : quote(name.substring(0, dot));
    Map<String, String> types = new java.util.HashMap<>();
    for (List<String> row :
        query(
                "SELECT name, type FROM system.columns WHERE database = "
                    + database
                    + " AND table = "
                    + quote(dot < 0 ? name : name.substring(dot + 1)))
            .rows()) {
      types.put(row.get(0), row.get(1));
    }
    StringBuilder out = new StringBuilder();
    for (String column : columns) {
      String type = types.get(InsertStatements.identifier(column));
      if (type == null) {
        throw new StoreException("cannot insert into " + table + ": it has no column " + column);
      }
      out.append(out.length() == 0 ? "" : ", ")
          .append('`')
          .append(column)
          .append("` ")
          .append(type);
    }
    return out.toString();
  }

  /**
   * Stages {@code data} in a file under the data directory for {@code runner}, removed afterwards.
   */
  private <T> T insertFromFile(byte[] data, java.util.function.Function<Path, T> runner) {
    Path file = null;
    try {
      file = Files.createTempFile(stagingDirectory(), "insert-", ".bin");
      Files.write(file, data);
      return runner.apply(file);
    } catch (IOException e) {
      throw new StoreException("cannot stage insert data under " + dataDir + ": " + e, e);
    } finally {
      if (file != null) {
        try {
          Files.deleteIfExists(file);
        } catch (IOException ignored) {
          // a leftover staging file is harmless
        }
      }
    }
  }

  /**
   * Another engine session over this store's data directory, for a server that answers several
   * clients: its settings, parameters, current database and temporary tables are its own, and it
   * runs queries concurrently with every other session. Closed with the store at the latest.
   */
  public ChdbConnection openSession() {
    synchronized (sessions) {
      if (closed) {
        throw new StoreException("embedded store at " + dataDir + " is closed");
      }
      ChdbConnection session = ChdbConnection.open(library, dataDir, engineArgs);
      sessions.add(session);
      return session;
    }
  }

  /** Closes a session from {@link #openSession()}. */
  public void closeSession(ChdbConnection session) {
    synchronized (sessions) {
      sessions.remove(session);
    }
    session.close();
  }

  /**
   * Where data staged for the engine to read (INSERT ... FROM INFILE) lives: under the data
   * directory.
   */
  public Path stagingDirectory() throws IOException {
    return Files.createDirectories(dataDir.resolve("tmp-inserts"));
  }

  private ChdbConnection.Result run(byte[] sql, String format, String forMessage) {
    try {
      return connection.query(sql, format);
    } catch (ChdbConnection.QueryFailure e) {
      throw new StoreException(e.getMessage() + "\n  in: " + abbreviate(forMessage), e);
    }
  }

  static String abbreviate(String sql) {
    String oneLine = sql.strip().replaceAll("\\s+", " ");
    return oneLine.length() <= 300 ? oneLine : oneLine.substring(0, 297) + "...";
  }

  static String quote(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }

  @Override
  public String description() {
    return "embedded ClickHouse (chDB) at " + dataDir;
  }

  @Override
  public void close() {
    List<ChdbConnection> open;
    synchronized (sessions) {
      closed = true;
      open = List.copyOf(sessions);
      sessions.clear();
    }
    try {
      open.forEach(ChdbConnection::close);
      connection.close();
    } finally {
      try {
        lock.release();
      } catch (IOException ignored) {
        // the channel's close below releases it too
      }
      closeQuietly(lockChannel);
    }
  }

  private static void closeQuietly(FileChannel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // nothing left to release
      }
    }
  }
}
