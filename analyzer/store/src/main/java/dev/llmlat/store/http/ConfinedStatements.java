package dev.llmlat.store.http;

import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.StoreException;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.confine.StatementCheck;
import dev.llmlat.store.internal.ChdbConnection;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Asks the engine how it parses a client's statement, on the session that is to run it (so its
 * settings and parameters are the statement's own), and refuses it as ClickHouse refuses what a
 * user may not do: code 497, ACCESS_DENIED, with the reason.
 */
final class ConfinedStatements {
  private static final String TOKENS =
      "SELECT t.1, t.2, t.3 FROM (SELECT arrayJoin(tokenizeQuery(%s)) AS t)";

  /** Decisions kept, by statement and parameters: the tree depends on nothing else here. */
  private static final int DECISIONS = 1024;

  private static final int LONGEST_KEPT = 16 * 1024;

  private final StatementCheck check;
  // a dashboard or an ingester sends the same statements again and again; asking the engine
  // (tokens, then
  // the tree) costs 0.5-0.8 ms a statement (measured on chDB 26.5.3, 2 cores), a kept decision
  // nothing
  private final Map<List<Object>, Optional<String>> decided =
      new java.util.LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Object>, Optional<String>> eldest) {
          return size() > DECISIONS;
        }
      };

  private ConfinedStatements(StatementCheck check) {
    this.check = check;
  }

  /**
   * For a store opened confined; checks first that its engine refuses what the confinement says it
   * refuses (a store whose engine booted otherwise is not served).
   */
  static ConfinedStatements of(EmbeddedClickHouse store, EngineConnection c)
      throws ChdbConnection.QueryFailure {
    Confinement confinement = store.confinement();
    if (confinement == null) {
      throw new IllegalArgumentException(
          "store serve answers clients only over a confined store: open "
              + store.dataDir()
              + " with EmbeddedClickHouse.openConfined");
    }
    String probe = store.dataDir().resolve("llmlat-serve").resolve("confinement-probe").toString();
    try {
      c.run(
          "INSERT INTO FUNCTION file("
              + EngineConnection.quote(probe)
              + ", 'LineAsString') SELECT 'written'");
      throw new StoreException(
          "the engine of "
              + store.dataDir()
              + " wrote "
              + probe
              + " for a client: it did not boot with its access control, so store serve will not answer clients");
    } catch (ChdbConnection.QueryFailure expected) {
      if (expected.code() != ClickHouseError.ACCESS_DENIED) {
        throw expected;
      }
    }
    Set<String> functions = names(c, "SELECT name FROM system.table_functions");
    Set<String> engines =
        names(
            c,
            "SELECT name FROM system.table_engines UNION ALL SELECT name FROM system.database_engines");
    return new ConfinedStatements(new StatementCheck(confinement, functions, engines));
  }

  private static Set<String> names(EngineConnection c, String sql)
      throws ChdbConnection.QueryFailure {
    return new HashSet<>(Arrays.asList(c.text(sql).split("\n")));
  }

  /** The refusal of {@code q} on {@code c}, or null when it may run. */
  ClickHouseError refusal(EngineConnection c, QueryRequest q) throws ChdbConnection.QueryFailure {
    long size =
        q.statement().length() + q.params().values().stream().mapToLong(String::length).sum();
    List<Object> key = size <= LONGEST_KEPT ? List.of(q.statement(), Map.copyOf(q.params())) : null;
    Optional<String> known;
    synchronized (decided) {
      known = key == null ? null : decided.get(key);
    }
    if (known != null) {
      return known.map(ConfinedStatements::denied).orElse(null);
    }
    List<StatementCheck.Token> tokens = tokens(c, q.statement());
    Optional<String> early = check.refusalBeforeParsing(tokens);
    if (early.isPresent()) {
      remember(key, early);
      return denied(early.get());
    }
    String tree;
    try {
      tree = text(c, "EXPLAIN AST " + q.statement(), q.params());
    } catch (ChdbConnection.QueryFailure e) {
      return ClickHouseError.fromEngine(
          e.code(), e.getMessage()); // what the statement itself would have met
    }
    Optional<String> refused = check.refusal(q.statement(), tree, tokens);
    remember(key, refused);
    return refused.map(ConfinedStatements::denied).orElse(null);
  }

  private void remember(List<Object> key, Optional<String> decision) {
    if (key != null) {
      synchronized (decided) {
        decided.put(key, decision);
      }
    }
  }

  private static ClickHouseError denied(String reason) {
    return ClickHouseError.of(
        ClickHouseError.ACCESS_DENIED,
        Authenticator.USER + ": Not enough privileges through store serve: " + reason);
  }

  private static String text(EngineConnection c, String sql, Map<String, String> params)
      throws ChdbConnection.QueryFailure {
    try (var result =
        c.chdb.execute(sql.getBytes(StandardCharsets.UTF_8), "TabSeparatedRaw", params)) {
      return new String(result.bytes(), StandardCharsets.UTF_8);
    }
  }

  /** The engine's tokens; their offsets are in bytes of UTF-8. */
  private static List<StatementCheck.Token> tokens(EngineConnection c, String statement)
      throws ChdbConnection.QueryFailure {
    byte[] bytes = statement.getBytes(StandardCharsets.UTF_8);
    // a literal, not a query parameter: the engine clears a session's SET parameters after any call
    // with parameters
    String rows = text(c, TOKENS.formatted(EngineConnection.quote(statement)), Map.of());
    List<StatementCheck.Token> tokens = new ArrayList<>();
    for (String row : rows.split("\n")) {
      String[] f = row.split("\t");
      if (f.length == 3) {
        int from = Integer.parseInt(f[0]);
        int to = Integer.parseInt(f[1]);
        tokens.add(
            new StatementCheck.Token(
                new String(bytes, from, to - from, StandardCharsets.UTF_8), f[2]));
      }
    }
    return tokens;
  }
}
