package dev.llmlat.store.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.internal.ChdbConnection;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Serves ClickHouse's HTTP interface over the embedded engine, on loopback, so the official
 * driver, curl and Grafana reach the one process that owns the data directory exactly as they
 * would reach a server.
 *
 * <p>The documented subset: {@code GET /ping}; {@code GET|POST /} with the query in the body or in
 * {@code ?query=} (then the body is the INSERT's data); {@code default_format}, {@code query_id},
 * {@code database=default} as parameters or as {@code X-ClickHouse-Format}, {@code -Query-Id},
 * {@code -Database} headers; other parameters are ClickHouse settings applied to that query only.
 * Responses carry {@code X-ClickHouse-Query-Id}, {@code -Format}, {@code -Timezone},
 * {@code -Summary}; errors are ClickHouse's text with {@code X-ClickHouse-Exception-Code}.
 * Compressed requests or responses ({@code compress=1}, {@code decompress=1}) are refused with a
 * message saying so.
 */
public final class ClickHouseHttpServer implements AutoCloseable {
  /** Parameters that belong to the protocol or the client, not to ClickHouse's settings. */
  private static final Set<String> PROTOCOL_PARAMETERS =
      Set.of(
          "query", "default_format", "query_id", "database", "user", "password", "session_id",
          "session_timeout", "session_check", "compress", "decompress", "enable_http_compression",
          "wait_end_of_query", "send_progress_in_http_headers", "http_headers_progress_interval_ms",
          "buffer_size", "client_protocol_version", "role", "max_result_rows", "result_overflow_mode",
          "extremes", "http_response_buffer_size", "add_http_cors_header", "output_format_write_statistics");

  private final EmbeddedClickHouse store;
  private final HttpServer server;
  private final ExecutorService executor;
  private final AtomicLong queries = new AtomicLong();
  private final AtomicLong errors = new AtomicLong();

  private ClickHouseHttpServer(EmbeddedClickHouse store, HttpServer server, ExecutorService executor) {
    this.store = store;
    this.server = server;
    this.executor = executor;
  }

  /** Starts serving {@code store} on {@code 127.0.0.1:port} (0 picks a free port). */
  public static ClickHouseHttpServer start(EmbeddedClickHouse store, int port) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
    ExecutorService executor = Executors.newFixedThreadPool(4, r -> {
      Thread t = new Thread(r, "clickhouse-http");
      t.setDaemon(true);
      return t;
    });
    ClickHouseHttpServer http = new ClickHouseHttpServer(store, server, executor);
    server.createContext("/", http::handle);
    server.setExecutor(executor);
    server.start();
    return http;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** The URL clients use, such as {@code http://127.0.0.1:8123}. */
  public String url() {
    return "http://127.0.0.1:" + port();
  }

  /** Queries answered so far, and how many of them failed. */
  public long queries() {
    return queries.get();
  }

  public long errors() {
    return errors.get();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      if (path.equals("/ping") || path.equals("/")
          && "GET".equals(exchange.getRequestMethod()) && exchange.getRequestURI().getRawQuery() == null) {
        reply(exchange, 200, "Ok.\n".getBytes(StandardCharsets.UTF_8), Map.of("Content-Type", "text/plain; charset=UTF-8"));
        return;
      }
      if (!path.equals("/")) {
        error(exchange, 404, 0, "There is no handle " + path + "; llmlat's store serves / and /ping");
        return;
      }
      Map<String, String> params = parameters(exchange.getRequestURI().getRawQuery());
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      if (isOn(params.get("compress")) || isOn(params.get("decompress"))
          || exchange.getRequestHeaders().containsKey("Content-Encoding")) {
        error(exchange, 400, 1, "llmlat's store serves uncompressed HTTP only: connect with compress=false");
        return;
      }
      String database = parameter(exchange, params, "database", "X-ClickHouse-Database", "default");
      if (!database.equals("default")) {
        error(exchange, 400, 81, "Database " + database + " does not exist: llmlat's store serves 'default' only");
        return;
      }
      String queryParam = params.get("query");
      byte[] sql = queryParam != null ? queryParam.getBytes(StandardCharsets.UTF_8) : body;
      if (sql.length == 0) {
        error(exchange, 400, 62, "Empty query");
        return;
      }
      String format = parameter(exchange, params, "default_format", "X-ClickHouse-Format", "TabSeparated");
      Map<String, String> settings = new LinkedHashMap<>();
      params.forEach((k, v) -> {
        if (!PROTOCOL_PARAMETERS.contains(k)) { // settings and query parameters (param_x)
          settings.put(k, v);
        }
      });
      String queryId = parameter(exchange, params, "query_id", "X-ClickHouse-Query-Id", UUID.randomUUID().toString());
      queries.incrementAndGet();
      ChdbConnection.Result result;
      try {
        result = queryParam != null && body.length > 0
            ? store.insertRaw(queryParam, body, format, settings) // ClickHouse's rule: with ?query=, the body is the data
            : store.queryRaw(sql, format, settings);
      } catch (ChdbConnection.QueryFailure e) {
        errors.incrementAndGet();
        error(exchange, 500, e.code(), e.getMessage());
        return;
      } catch (RuntimeException e) {
        errors.incrementAndGet();
        error(exchange, 500, 1000, String.valueOf(e.getMessage()));
        return;
      }
      Map<String, String> headers = new LinkedHashMap<>();
      headers.put("Content-Type", "text/plain; charset=UTF-8");
      headers.put("X-ClickHouse-Query-Id", queryId);
      headers.put("X-ClickHouse-Format", format);
      headers.put("X-ClickHouse-Timezone", "UTC");
      headers.put("X-ClickHouse-Server-Display-Name", "llmlat-embedded");
      headers.put("X-ClickHouse-Summary",
          "{\"read_rows\":\"" + result.rowsRead() + "\",\"read_bytes\":\"0\",\"written_rows\":\"0\","
              + "\"written_bytes\":\"0\",\"total_rows_to_read\":\"" + result.rowsRead() + "\",\"result_rows\":\"0\",\"result_bytes\":\""
              + result.bytes().length + "\",\"elapsed_ns\":\"0\"}");
      reply(exchange, 200, result.bytes(), headers);
    } catch (IOException | RuntimeException e) {
      // the client went away mid-reply: nothing to answer
    }
  }

  /** A URL parameter, else its X-ClickHouse-* header (as the official clients send it), else a default. */
  private static String parameter(HttpExchange exchange, Map<String, String> params, String name, String header, String otherwise) {
    String value = params.get(name);
    if (value == null) {
      value = exchange.getRequestHeaders().getFirst(header);
    }
    return value == null || value.isEmpty() ? otherwise : value;
  }

  private static boolean isOn(String value) {
    return value != null && (value.equals("1") || value.equalsIgnoreCase("true"));
  }

  private static Map<String, String> parameters(String rawQuery) {
    Map<String, String> params = new LinkedHashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return params;
    }
    for (String pair : rawQuery.split("&")) {
      int eq = pair.indexOf('=');
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      params.put(key, value);
    }
    return params;
  }

  private static void error(HttpExchange exchange, int status, int code, String message) throws IOException {
    String text = message.startsWith("Code: ") ? message : "Code: " + code + ". DB::Exception: " + message;
    reply(exchange, status, (text + "\n").getBytes(StandardCharsets.UTF_8),
        Map.of("Content-Type", "text/plain; charset=UTF-8", "X-ClickHouse-Exception-Code", Integer.toString(code)));
  }

  private static void reply(HttpExchange exchange, int status, byte[] body, Map<String, String> headers) throws IOException {
    headers.forEach((k, v) -> exchange.getResponseHeaders().set(k, v));
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
