package dev.llmlat.store.http;

import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.StoreException;
import dev.llmlat.store.internal.ChdbConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Serves ClickHouse's HTTP interface over the embedded engine, so the official drivers, curl and
 * Grafana reach the one process that owns the data directory as they would reach a server.
 *
 * <p>What ClickHouse does, this does: {@code /ping} and {@code /replicas_status}; queries by GET
 * (readonly) or POST, in {@code ?query=} and/or the body; {@code param_x} parameters and every
 * other URL parameter as a setting for that query only; {@code session_id} sessions keeping SET,
 * USE and temporary tables; a password by basic auth, {@code X-ClickHouse-User/Key} or {@code
 * user/password}; gzip, deflate and zstd bodies and answers, and ClickHouse's own compression
 * ({@code compress}, {@code decompress}); ClickHouse's statuses, error texts and X-ClickHouse-*
 * headers; KILL QUERY by the client's query id.
 *
 * <p>Each query runs on an engine session of its own, concurrently with others up to a limit; more
 * wait in a bounded queue and the rest are answered 503 at once. {@code /ping} never waits. A query
 * whose client disconnects is killed.
 *
 * <p>HTTP/1.1 itself is Jetty's (its core handlers, no servlets): it frames requests, refusing
 * every framing two parsers could read differently, and times out slow and idle connections.
 */
public final class ClickHouseHttpServer implements AutoCloseable {
  private final ServerConfig config;
  private final Server server;
  private final ServerConnector connector;
  private final Authenticator authenticator;
  private final RequestReader reader;
  private final QueryRunner runner;
  private final Answers answers;
  private final ConnectionPool pool;
  private final Sessions sessions;
  private final Killer killer;
  private final RunningQueries running;
  private final ExecutorService engineThreads;
  private final ExecutorService watchers = Executors.newVirtualThreadPerTaskExecutor();
  private final ScheduledExecutorService timer;
  private final BrowserGuard browsers;

  private ClickHouseHttpServer(EmbeddedClickHouse store, ServerConfig config) {
    this.config = config;
    this.authenticator = new Authenticator(config.password());
    this.reader =
        new RequestReader(
            () -> {
              try {
                return store.stagingDirectory();
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    this.pool = new ConnectionPool(store);
    this.sessions =
        new Sessions(
            store,
            config.maxSessions(),
            config.defaultSessionTimeout(),
            config.maxSessionTimeout());
    this.killer = new Killer(store);
    this.engineThreads =
        Executors.newCachedThreadPool(
            r -> {
              // native calls pin a virtual thread's carrier: the engine's work gets platform
              // threads
              Thread t = new Thread(r, "clickhouse-engine");
              t.setDaemon(true);
              return t;
            });
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "clickhouse-sessions");
              t.setDaemon(true);
              return t;
            });
    this.answers = new Answers(timezone(pool));
    this.running = new RunningQueries(killer);
    this.runner =
        new QueryRunner(
            pool,
            sessions,
            running,
            confined(store, pool),
            new Admission(
                config.maxConcurrentQueries(), config.maxQueuedQueries(), config.queueTimeout()),
            engineThreads,
            answers);
    QueuedThreadPool threads = new QueuedThreadPool();
    threads.setName("clickhouse-http");
    threads.setDaemon(true);
    // a handler waits for the engine's answer: waiting costs a virtual thread, not a platform one
    threads.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
    this.server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    // ClickHouse's http_max_uri_size and field sizes: query parameters may be long
    http.setRequestHeaderSize(2 << 20);
    // RFC 9110's strict framing, except that identical Content-Length values fold (RFC 9110 §8.6)
    http.setHttpCompliance(
        HttpCompliance.RFC9110.with("llmlat", HttpCompliance.Violation.MULTIPLE_CONTENT_LENGTHS));
    HeadDeadline factory = new HeadDeadline(http, config.headerTimeout());
    this.connector = new ServerConnector(server, 1, 1, factory);
    connector.setHost(config.bind().getHostAddress());
    connector.setPort(config.port());
    connector.setReuseAddress(true);
    connector.setAcceptQueueSize(128);
    connector.setIdleTimeout(
        config
            .keepAliveTimeout()
            .toMillis()); // between requests; a body's pauses get the receive timeout
    server.addConnector(connector);
    server.setErrorHandler(new PlainErrors());
    server.setHandler(
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            serve(request, response, callback);
            return true;
          }
        });
    server.setStopTimeout(0);
    this.browsers = new BrowserGuard(config.password() == null, () -> connector.getLocalPort());
  }

  /**
   * Serves {@code store} on {@code 127.0.0.1:port} (0 picks a free port) without a password: for
   * tests and in-process use.
   */
  public static ClickHouseHttpServer start(EmbeddedClickHouse store, int port) throws IOException {
    return start(store, ServerConfig.loopbackWithoutPassword(port));
  }

  public static ClickHouseHttpServer start(EmbeddedClickHouse store, ServerConfig config)
      throws IOException {
    ClickHouseHttpServer server = new ClickHouseHttpServer(store, config);
    try {
      server.server.start();
    } catch (Exception e) {
      server.close();
      if (e instanceof IOException io) {
        throw io;
      }
      throw new IOException(
          "cannot serve on "
              + config.bind().getHostAddress()
              + ":"
              + config.port()
              + ": "
              + e.getMessage(),
          e);
    }
    server.timer.scheduleWithFixedDelay(server.sessions::expire, 5, 5, TimeUnit.SECONDS);
    return server;
  }

  private static String timezone(ConnectionPool pool) {
    try {
      EngineConnection c = pool.take(0);
      try {
        return c.single("SELECT timezone()");
      } finally {
        pool.give(c, true);
      }
    } catch (ChdbConnection.QueryFailure e) {
      throw new StoreException("the embedded engine does not answer: " + e.getMessage(), e);
    }
  }

  private static ConfinedStatements confined(EmbeddedClickHouse store, ConnectionPool pool) {
    try {
      EngineConnection c = pool.take(0);
      try {
        return ConfinedStatements.of(store, c);
      } finally {
        pool.give(c, false); // it ran a refused statement: not handed to a client
      }
    } catch (ChdbConnection.QueryFailure e) {
      throw new StoreException("the embedded engine does not answer: " + e.getMessage(), e);
    }
  }

  public int port() {
    return connector.getLocalPort();
  }

  /** The URL clients use, such as {@code http://127.0.0.1:8123}. */
  public String url() {
    String host = config.bind().isAnyLocalAddress() ? "127.0.0.1" : config.bind().getHostAddress();
    return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port();
  }

  public ServerConfig config() {
    return config;
  }

  /** Queries answered so far, and how many requests failed. */
  public long queries() {
    return answers.queries();
  }

  public long errors() {
    return answers.errors();
  }

  /**
   * One request, on a thread of Jetty's pool: answered, or failed so that Jetty answers or aborts
   * it.
   */
  private void serve(Request request, Response response, Callback callback) {
    EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
    endPoint.setIdleTimeout(config.receiveTimeout().toMillis()); // the longest pause within a body
    HttpExchange exchange =
        new HttpExchange(
            request, response, config.keepAliveTimeout(), config.receiveTimeout(), watchers);
    boolean complete;
    try {
      handle(exchange);
      complete = exchange.response().complete();
    } catch (IOException | RuntimeException e) {
      RequestBody.Broken broken = exchange.bodyFailure();
      if (broken != null && !exchange.response().committed()) {
        // the body broke its framing, ended early or stalled: 400 or 408, and the connection closes
        callback.failed(
            new HttpException.RuntimeException(broken.status(), broken.getMessage(), broken));
      } else {
        callback.failed(e);
      }
      return;
    } finally {
      endPoint.setIdleTimeout(config.keepAliveTimeout().toMillis());
    }
    if (complete) {
      callback.succeeded();
    } else {
      callback.failed(new EofException("the answer was cut off"));
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    HttpRequest request = exchange.request();
    String transferEncoding = request.header("Transfer-Encoding");
    if (transferEncoding != null && !transferEncoding.strip().equalsIgnoreCase("chunked")) {
      // Jetty takes "gzip, chunked" as chunked; this server decodes no coding but chunked (gzip
      // goes in Content-Encoding)
      throw new HttpException.RuntimeException(
          400, "Transfer-Encoding '" + transferEncoding + "' is not supported: only chunked");
    }
    String path = request.path();
    String method = request.method();
    Map<String, String> params = request.parameters();
    boolean get = method.equals("GET") || method.equals("HEAD");
    String foreign = browsers.refusal(request);
    if (foreign != null) {
      plain(exchange, 403, "Forbidden: " + foreign + "\n");
      return;
    }
    if (path.equals("/ping")
        || path.equals("/replicas_status")
        || path.equals("/") && get && !params.containsKey("query")) {
      exchange.response().header("Content-Type", "text/plain; charset=UTF-8");
      exchange.response().send(200, "Ok.\n".getBytes(StandardCharsets.UTF_8));
      return;
    }
    if (!path.equals("/")) {
      plain(
          exchange,
          404,
          "There is no handle "
              + path
              + "\n\nUse / or /ping for health checks.\n"
              + "Send queries with POST or GET /?query=...\n");
      return;
    }
    if (!get && !method.equals("POST")) {
      plain(exchange, 405, "Method " + method + " is not allowed: use GET (read-only) or POST\n");
      return;
    }
    ClickHouseError refused = authenticator.check(request, params);
    if (refused != null) {
      answers.error(
          exchange, null,
          refused); // its body is not read: skipped when small, else the connection closes
      return;
    }
    QueryRequest q;
    try {
      q = reader.read(request, params);
    } catch (RequestReader.Refused e) {
      answers.error(exchange, null, e.error);
      return;
    }
    try {
      runner.serve(exchange, q);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void plain(HttpExchange exchange, int status, String text) throws IOException {
    exchange.response().header("Content-Type", "text/plain; charset=UTF-8");
    exchange.response().send(status, text.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  public void close() {
    timer.shutdownNow();
    running.cancelAll(); // a query still in the engine must end before its session closes
    try {
      server.stop(); // closes every connection; handlers waiting for the engine see their query
      // cancelled
    } catch (Exception ignored) {
      // closing anyway
    }
    watchers.shutdownNow();
    engineThreads.shutdown();
    try {
      engineThreads.awaitTermination(
          5, TimeUnit.SECONDS); // within the exit sequence's 10 s for this step
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    sessions.close();
    pool.close();
    killer.close();
  }
}
