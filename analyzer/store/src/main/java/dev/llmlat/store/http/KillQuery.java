package dev.llmlat.store.http;

import dev.llmlat.store.internal.SqlText;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A KILL QUERY statement. The engine knows queries by ids of its own, so {@code WHERE query_id =
 * '...'} with an id a client gave (or got in X-ClickHouse-Query-Id) is resolved here; other
 * conditions go to the engine, SYNC turned into ASYNC (chDB 26.5 hangs on SYNC).
 *
 * @param queryId the id in {@code WHERE query_id = '...'}, or null for any other condition
 */
record KillQuery(String queryId, boolean sync, boolean test) {
  private static final Pattern BY_ID =
      Pattern.compile(
          "(?is)^\\s*KILL\\s+QUERY\\s+WHERE\\s+query_id\\s*=\\s*'((?:[^'\\\\]|\\\\.)*)'\\s*(SYNC|ASYNC|TEST)?\\s*(FORMAT\\s+\\w+)?\\s*;?\\s*$");
  private static final Pattern TRAILING_SYNC =
      Pattern.compile("(?is)\\bSYNC(\\s*(FORMAT\\s+\\w+)?\\s*;?\\s*)$");

  /** The statement as a KILL QUERY, or null when it is something else. */
  static KillQuery parse(SqlText text, String sql) {
    if (text.words().size() < 2
        || !text.words().get(0).equals("KILL")
        || !text.words().get(1).equals("QUERY")) {
      return null;
    }
    Matcher m = BY_ID.matcher(sql);
    if (m.matches()) {
      String mode = m.group(2) == null ? "ASYNC" : m.group(2).toUpperCase(java.util.Locale.ROOT);
      String id = m.group(1).replaceAll("\\\\(.)", "$1");
      return new KillQuery(id, mode.equals("SYNC"), mode.equals("TEST"));
    }
    return new KillQuery(null, text.hasWord("SYNC"), text.hasWord("TEST"));
  }

  /** The request with SYNC replaced by ASYNC, for the engine. */
  QueryRequest withoutSync(QueryRequest q) {
    if (!sync) {
      return q;
    }
    String sql = TRAILING_SYNC.matcher(q.sql()).replaceFirst("ASYNC$1");
    return new QueryRequest(
        q.queryId(),
        sql,
        SqlText.of(sql),
        q.dataFile(),
        q.format(),
        q.settings(),
        q.params(),
        q.database(),
        q.readonly(),
        q.get(),
        q.sessionId(),
        q.sessionTimeout(),
        q.sessionCheck(),
        q.waitEndOfQuery(),
        q.httpEncoding(),
        q.compress(),
        q.replaceRunning(),
        sql);
  }
}
