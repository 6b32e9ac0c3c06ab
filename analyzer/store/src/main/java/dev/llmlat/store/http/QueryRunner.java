package dev.llmlat.store.http;

import dev.llmlat.store.internal.ChdbConnection;
import dev.llmlat.store.internal.NativeResult;
import dev.llmlat.store.internal.ResultStream;
import dev.llmlat.store.internal.SqlText;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * Runs one query on an engine session of its own and answers it. The settings, parameters and
 * database the request names apply to this query alone: they are set before it and put back after
 * it, and a pooled session whose state the query may have changed is closed instead of reused.
 * While the engine works, the connection is watched for the client leaving: when it goes away (or
 * KILL QUERY names the query), the engine query is killed.
 */
final class QueryRunner {
  /**
   * Statements that leave state in an engine session (SET, USE, temporary tables, transactions).
   */
  private static final String[] SESSION_CHANGING = {
    "SET", "USE", "TEMPORARY", "BEGIN", "COMMIT", "ROLLBACK", "START"
  };

  /** Statements a readonly query may run (INSERT and OUTFILE are refused wherever they appear). */
  private static final Set<String> READ_STATEMENTS =
      Set.of(
          "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXISTS", "EXPLAIN", "CHECK", "USE", "SET");

  private static final String GET_HINT =
      "For queries over HTTP, method GET implies readonly. You should use method POST for modifying queries";

  private final ConnectionPool pool;
  private final Sessions sessions;
  private final RunningQueries running;
  private final ConfinedStatements confined;
  private final Admission admission;
  private final ExecutorService engineThreads;
  private final Answers answers;

  QueryRunner(
      ConnectionPool pool,
      Sessions sessions,
      RunningQueries running,
      ConfinedStatements confined,
      Admission admission,
      ExecutorService engineThreads,
      Answers answers) {
    this.pool = pool;
    this.confined = confined;
    this.sessions = sessions;
    this.running = running;
    this.admission = admission;
    this.engineThreads = engineThreads;
    this.answers = answers;
  }

  /**
   * Serves {@code q} on the connection's thread; the engine's work runs on an engine thread
   * meanwhile.
   */
  void serve(HttpExchange exchange, QueryRequest q) throws IOException, InterruptedException {
    KillQuery kill = KillQuery.parse(q.text(), q.sql());
    if (kill != null && kill.queryId() != null && running.find(kill.queryId()) != null) {
      serveKill(exchange, q, kill); // one of ours: found by the id the client knows, killed at once
      return;
    }
    // a KILL must get through when every turn is taken by the queries it is meant to stop
    ClickHouseError refused = kill != null ? null : admission.enter();
    if (refused != null) {
      answers.error(exchange, q, refused);
      return;
    }
    try {
      RunningQueries.Running r = running.start(q.queryId(), q.sql(), q.replaceRunning());
      if (r == null) {
        answers.error(
            exchange,
            q,
            ClickHouseError.of(
                ClickHouseError.QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING,
                "Query with id = " + q.queryId() + " is already running"));
        return;
      }
      try {
        QueryRequest toRun = kill != null ? kill.withoutSync(q) : q;
        Future<?> work =
            engineThreads.submit(
                () -> {
                  execute(exchange, toRun, r);
                  return null;
                });
        watch(exchange, work, r);
      } finally {
        r.end();
      }
    } finally {
      if (kill == null) {
        admission.leave();
      }
      RequestReader.deleteQuietly(q.dataFile());
    }
  }

  /** Waits for the engine's work, killing it when the client goes away. */
  private static void watch(HttpExchange exchange, Future<?> work, RunningQueries.Running r)
      throws IOException, InterruptedException {
    exchange.watchClient(r::cancel);
    try {
      work.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new IOException(cause);
    } catch (InterruptedException e) {
      r.cancel();
      throw e;
    } finally {
      exchange.stopWatching();
    }
  }

  /** On an engine thread: takes a session, runs the query, answers, puts the session back. */
  private void execute(HttpExchange exchange, QueryRequest q, RunningQueries.Running r)
      throws IOException {
    Sessions.Session session = null;
    EngineConnection connection;
    try {
      if (q.sessionId() != null) {
        Sessions.Lease lease = sessions.take(q.sessionId(), q.sessionTimeout(), q.sessionCheck());
        if (lease.error() != null) {
          answers.error(exchange, q, lease.error());
          return;
        }
        session = lease.session();
        connection = session.connection;
      } else {
        connection = pool.take(q.readonly());
      }
    } catch (ChdbConnection.QueryFailure e) {
      answers.error(exchange, q, ClickHouseError.fromEngine(e.code(), e.getMessage()));
      return;
    }
    Outcome outcome = new Outcome();
    try {
      ClickHouseError refusal = readonlyRefusal(q);
      if (refusal != null) {
        answers.error(exchange, q, refusal);
        return;
      }
      String marker = q.settings().getOrDefault("log_comment", connection.marker);
      r.runsAs(marker);
      run(exchange, q, r, connection, session != null, outcome);
    } catch (RuntimeException e) {
      // the engine call itself failed (not the query): answer rather than drop the connection
      outcome.stateUnknown = true;
      answers.error(
          exchange,
          q,
          ClickHouseError.of(ClickHouseError.UNKNOWN_EXCEPTION, String.valueOf(e.getMessage())));
    } finally {
      boolean changed =
          outcome.broken
              || outcome.stateUnknown
              || r.cancelled()
              || q.text().hasWord(SESSION_CHANGING);
      if (session != null) {
        // a killed query leaves its session as it was (ClickHouse keeps it too); settings that
        // could not be put back leave it unknown, and then it closes
        sessions.give(session, outcome.stateUnknown);
      } else {
        pool.give(connection, !changed && !outcome.databaseChanged);
      }
    }
  }

  /** What a run left behind, for whoever puts the session back. */
  private static final class Outcome {
    boolean broken; // the query failed midway: a pooled session is not reused
    boolean stateUnknown; // the request's settings or database could not be put back
    boolean databaseChanged;
  }

  private void run(
      HttpExchange exchange,
      QueryRequest q,
      RunningQueries.Running r,
      EngineConnection c,
      boolean inSession,
      Outcome outcome)
      throws IOException {
    SettingsScope settings = null;
    String previousDatabase = null;
    try {
      // a pooled session is always in default; a named session may have USEd another
      if (q.database() != null && (inSession || !q.database().equals("default"))) {
        if (inSession) {
          previousDatabase = c.single("SELECT currentDatabase()");
        }
        c.run("USE " + identifier(q.database()));
        outcome.databaseChanged = true;
      }
      settings = SettingsScope.apply(c, q.settings(), inSession);
    } catch (ChdbConnection.QueryFailure e) {
      if (previousDatabase != null) {
        try {
          c.run("USE " + identifier(previousDatabase));
        } catch (ChdbConnection.QueryFailure again) {
          outcome.stateUnknown = true;
        }
      }
      answers.error(exchange, q, ClickHouseError.fromEngine(e.code(), e.getMessage()));
      return;
    }
    try {
      ClickHouseError refused = confined.refusal(c, q);
      if (refused != null) {
        answers.error(exchange, q, refused);
        return;
      }
      answer(exchange, q, r, c, outcome);
    } catch (ChdbConnection.QueryFailure e) {
      outcome.stateUnknown = true;
      answers.error(exchange, q, ClickHouseError.fromEngine(e.code(), e.getMessage()));
    } finally {
      try {
        if (settings != null) {
          settings.restore();
        }
        if (previousDatabase != null) {
          c.run("USE " + identifier(previousDatabase));
        }
      } catch (ChdbConnection.QueryFailure | RuntimeException e) {
        outcome.stateUnknown = true;
      }
    }
  }

  /** Runs the statement and sends its result: streamed when the format allows it, else whole. */
  private void answer(
      HttpExchange exchange,
      QueryRequest q,
      RunningQueries.Running r,
      EngineConnection c,
      Outcome outcome)
      throws IOException {
    byte[] sql = q.sql().getBytes(StandardCharsets.UTF_8);
    OutputFormat format = new OutputFormat(q.format());
    OutputFormat.ChunkHeader header = format.chunkHeader();
    boolean streamable =
        header != null
            && !q.waitEndOfQuery()
            && q.dataFile() == null
            && (q.text().firstWord().equals("SELECT") || q.text().firstWord().equals("WITH"));
    try {
      if (streamable) {
        try (ResultStream stream = c.chdb.stream(sql, q.format(), q.params())) {
          if (stream(exchange, q, r, stream, header, outcome)) {
            return;
          }
        } catch (ChdbConnection.QueryFailure e) {
          if (!(e.code() == ClickHouseError.BAD_ARGUMENTS
              && e.getMessage().contains("Streaming query is not supported"))) {
            throw e;
          }
        }
      }
      try (NativeResult result = c.chdb.execute(sql, q.format(), q.params())) {
        answers.result(exchange, q, result.stats(), List.of(result), header);
      }
    } catch (ChdbConnection.QueryFailure e) {
      ClickHouseError error = ClickHouseError.fromEngine(e.code(), e.getMessage());
      if (r.cancelled()) {
        outcome.broken = true;
      }
      if (error.code() == ClickHouseError.READONLY && q.get()) {
        error = error.withHint(GET_HINT);
      }
      if (exchange.response().committed()) {
        outcome.broken = true;
        answers.failMidway(exchange, error);
      } else {
        answers.error(exchange, q, error);
      }
    }
  }

  /**
   * Streams the result chunk by chunk; a result of one chunk is sent whole, with its length and
   * complete summary. Returns false when the result must be computed again whole (an empty stream
   * in a format whose header only a whole result carries).
   */
  private boolean stream(
      HttpExchange exchange,
      QueryRequest q,
      RunningQueries.Running r,
      ResultStream stream,
      OutputFormat.ChunkHeader header,
      Outcome outcome)
      throws ChdbConnection.QueryFailure, IOException {
    NativeResult first = stream.next();
    if (first == null) {
      if (header != OutputFormat.ChunkHeader.NONE) {
        return false;
      }
      answers.result(exchange, q, NativeResult.Stats.NONE, List.of(), header);
      return true;
    }
    List<NativeResult> held = new ArrayList<>(List.of(first));
    Answers.Streamed out = null;
    try {
      NativeResult second = r.cancelled() ? null : stream.next();
      if (second == null) {
        answers.result(exchange, q, first.stats(), held, header);
        return true;
      }
      held.add(second);
      NativeResult.Stats stats = first.stats().plus(second.stats());
      out = answers.startStream(exchange, q, stats);
      for (NativeResult chunk : held) {
        out.write(chunk, header);
      }
      held.forEach(NativeResult::close);
      held.clear();
      NativeResult next;
      while (!r.cancelled() && (next = stream.next()) != null) {
        try (NativeResult chunk = next) {
          out.write(chunk, header);
        } catch (IOException clientGone) {
          r.cancel();
          throw clientGone;
        }
      }
      if (r.cancelled()) {
        stream.cancel();
        outcome.broken = true;
        out.fail(ClickHouseError.of(ClickHouseError.QUERY_WAS_CANCELLED, "Query was cancelled"));
        return true;
      }
      out.finish();
      return true;
    } catch (ChdbConnection.QueryFailure e) {
      if (out == null) {
        throw e;
      }
      outcome.broken = true;
      out.fail(ClickHouseError.fromEngine(e.code(), e.getMessage()));
      return true;
    } finally {
      held.forEach(NativeResult::close);
    }
  }

  /**
   * A readonly query (GET, or readonly=1|2) may only read; the refusal ClickHouse gives, or null.
   */
  private static ClickHouseError readonlyRefusal(QueryRequest q) {
    if (q.readonly() == 0) {
      return null;
    }
    String first = q.text().firstWord();
    boolean reads =
        READ_STATEMENTS.contains(first)
            && !q.text().hasWord("INSERT", "OUTFILE")
            && !(first.equals("SET") && q.readonly() == 1);
    if (reads) {
      return null;
    }
    ClickHouseError e =
        ClickHouseError.of(
            ClickHouseError.READONLY,
            Authenticator.USER + ": Cannot execute query in readonly mode");
    return q.get() ? e.withHint(GET_HINT) : e;
  }

  /**
   * KILL QUERY for one of our queries: killed here, answered as ClickHouse answers (kill_status,
   * query_id, user, query).
   */
  private void serveKill(HttpExchange exchange, QueryRequest q, KillQuery kill)
      throws IOException, InterruptedException {
    RunningQueries.Running target = running.find(kill.queryId());
    String status = "waiting";
    if (target != null && !kill.test()) {
      target.cancel();
      if (kill.sync() && target.awaitEnd(Duration.ofSeconds(30))) {
        status = "finished";
      }
    }
    Map<String, String> params = new LinkedHashMap<>();
    params.put("kill_status", escaped(status));
    params.put("kill_query_id", escaped(kill.queryId()));
    params.put("kill_query", escaped(target == null ? "" : target.sql));
    String sql =
        "SELECT {kill_status:String} AS kill_status, {kill_query_id:String} AS query_id, 'default' AS user,"
            + " {kill_query:String} AS query"
            + (target == null ? " WHERE 0" : "");
    QueryRequest answer =
        new QueryRequest(
            q.queryId(),
            sql,
            SqlText.of(sql),
            null,
            q.format(),
            Map.of(),
            params,
            null,
            0,
            q.get(),
            null,
            null,
            false,
            false,
            q.httpEncoding(),
            q.compress(),
            false,
            sql);
    EngineConnection c;
    try {
      c = pool.take(0);
    } catch (ChdbConnection.QueryFailure e) {
      answers.error(exchange, q, ClickHouseError.fromEngine(e.code(), e.getMessage()));
      return;
    }
    boolean clean = true;
    try (NativeResult result =
        c.chdb.execute(sql.getBytes(StandardCharsets.UTF_8), q.format(), params)) {
      answers.result(
          exchange,
          answer,
          result.stats(),
          List.of(result),
          new OutputFormat(q.format()).chunkHeader());
    } catch (ChdbConnection.QueryFailure e) {
      clean = false;
      answers.error(exchange, q, ClickHouseError.fromEngine(e.code(), e.getMessage()));
    } finally {
      pool.give(c, clean);
    }
  }

  /** A parameter value in ClickHouse's escaped format. */
  static String escaped(String value) {
    return value
        .replace("\\", "\\\\")
        .replace("\t", "\\t")
        .replace("\n", "\\n")
        .replace("\r", "\\r");
  }

  private static String identifier(String name) {
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`";
  }

  /** The settings of one request, set on a session and put back as they were afterwards. */
  private static final class SettingsScope {
    private final EngineConnection c;
    private final Map<String, String> restore; // name -> value to put back, null for DEFAULT

    private SettingsScope(EngineConnection c, Map<String, String> restore) {
      this.c = c;
      this.restore = restore;
    }

    static SettingsScope apply(EngineConnection c, Map<String, String> settings, boolean inSession)
        throws ChdbConnection.QueryFailure {
      if (settings.isEmpty()) {
        return null;
      }
      Map<String, String> restore = new LinkedHashMap<>();
      if (inSession) {
        // a session may have SET these itself: put its values back, not the defaults
        StringBuilder names = new StringBuilder();
        settings
            .keySet()
            .forEach(
                n -> names.append(names.isEmpty() ? "" : ", ").append(EngineConnection.quote(n)));
        String rows =
            c.text(
                "SELECT name, changed, value FROM system.settings WHERE name IN (" + names + ")");
        for (String row : rows.split("\n")) {
          String[] f = row.split("\t", 3);
          if (f.length == 3 && f[1].equals("1")) {
            restore.put(f[0], unescape(f[2]));
          }
        }
      }
      for (String name : settings.keySet()) {
        restore.putIfAbsent(name, name.equals("log_comment") && !inSession ? c.marker : null);
      }
      StringBuilder set = new StringBuilder("SET ");
      settings.forEach(
          (k, v) ->
              set.append(set.length() == 4 ? "" : ", ")
                  .append(k)
                  .append(" = ")
                  .append(EngineConnection.quote(v)));
      c.run(set.toString());
      return new SettingsScope(c, restore);
    }

    void restore() throws ChdbConnection.QueryFailure {
      StringBuilder set = new StringBuilder("SET ");
      restore.forEach(
          (k, v) ->
              set.append(set.length() == 4 ? "" : ", ")
                  .append(k)
                  .append(" = ")
                  .append(v == null ? "DEFAULT" : EngineConnection.quote(v)));
      c.run(set.toString());
    }

    private static String unescape(String tsv) {
      StringBuilder out = new StringBuilder(tsv.length());
      for (int i = 0; i < tsv.length(); i++) {
        char ch = tsv.charAt(i);
        if (ch == '\\' && i + 1 < tsv.length()) {
          char n = tsv.charAt(++i);
          out.append(
              switch (n) {
                case 't' -> '\t';
                case 'n' -> '\n';
                case 'r' -> '\r';
                case '0' -> '\0';
                default -> n;
              });
        } else {
          out.append(ch);
        }
      }
      return out.toString();
    }
  }

  /**
   * Writes streamed chunks of one result, dropping the header that every chunk after the first
   * repeats.
   */
  static void writeChunk(
      OutputStream out, NativeResult chunk, OutputFormat.ChunkHeader header, boolean first)
      throws IOException {
    long from = first ? 0 : headerLength(chunk, header);
    chunk.writeTo(out, from);
  }

  static long headerLength(NativeResult chunk, OutputFormat.ChunkHeader header) {
    return switch (header) {
      case NONE -> 0;
      case ONE_LINE -> afterLines(chunk, 1);
      case TWO_LINES -> afterLines(chunk, 2);
      case ROW_BINARY_NAMES -> afterRowBinaryHeader(chunk, 1);
      case ROW_BINARY_NAMES_AND_TYPES -> afterRowBinaryHeader(chunk, 2);
    };
  }

  private static long afterLines(NativeResult chunk, int lines) {
    long at = 0;
    for (int seen = 0; seen < lines && at < chunk.length(); at++) {
      if (chunk.byteAt(at) == '\n') {
        seen++;
      }
    }
    return at;
  }

  /**
   * RowBinaryWithNames[AndTypes]: a varint column count, then that many names (and as many types),
   * each a varint length and bytes.
   */
  private static long afterRowBinaryHeader(NativeResult chunk, int listsOfStrings) {
    long[] at = {0};
    long columns = varint(chunk, at);
    for (long i = 0; i < columns * listsOfStrings; i++) {
      long len = varint(chunk, at);
      at[0] += len;
    }
    return Math.min(at[0], chunk.length());
  }

  private static long varint(NativeResult chunk, long[] at) {
    long value = 0;
    for (int shift = 0; shift < 64 && at[0] < chunk.length(); shift += 7) {
      byte b = chunk.byteAt(at[0]++);
      value |= (long) (b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    return value;
  }
}
