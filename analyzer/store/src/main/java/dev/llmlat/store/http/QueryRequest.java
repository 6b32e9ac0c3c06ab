package dev.llmlat.store.http;

import dev.llmlat.store.internal.SqlText;
import java.nio.file.Path;
import java.util.Map;

/**
 * One query as the client asked for it, taken apart: the statement, its staged INSERT data, the
 * settings and parameters that apply to it alone, and how to answer.
 *
 * @param sql the one statement the engine runs (an INSERT's data is not in it but in {@code
 *     dataFile})
 * @param text what the lexer read in {@code sql}
 * @param dataFile an INSERT's data, staged under the data directory, or null
 * @param format the output format: the statement's FORMAT clause, else the requested default
 * @param settings ClickHouse settings for this query only
 * @param params query parameters ({@code param_x}) for this query only, by name without the prefix
 * @param database the database to run in, or null for the session's own
 * @param readonly 0, 1 or 2: ClickHouse's {@code readonly} for this query (GET implies 2)
 * @param get whether the method was GET (its refusals say so, as ClickHouse's do)
 * @param sessionId the {@code session_id}, or null
 * @param waitEndOfQuery buffer the whole answer before sending it (ClickHouse's {@code
 *     wait_end_of_query})
 * @param httpEncoding the Content-Encoding of the answer, or null
 * @param compress answer in ClickHouse's compressed block format ({@code compress=1})
 * @param statement the client's statement as the confinement checks it: an INSERT's data cut off,
 *     before the server points it at the staged data
 */
record QueryRequest(
    String queryId,
    String sql,
    SqlText text,
    Path dataFile,
    String format,
    Map<String, String> settings,
    Map<String, String> params,
    String database,
    int readonly,
    boolean get,
    String sessionId,
    String sessionTimeout,
    boolean sessionCheck,
    boolean waitEndOfQuery,
    String httpEncoding,
    boolean compress,
    boolean replaceRunning,
    String statement) {}
