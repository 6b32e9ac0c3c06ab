package dev.llmlat.store.http;

import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.StoreException;
import dev.llmlat.store.http.wire.HttpConnectionHandler;
import dev.llmlat.store.http.wire.HttpExchange;
import dev.llmlat.store.http.wire.HttpRequest;
import dev.llmlat.store.internal.ChdbConnection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

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
 * <p>Each query runs on an engine session of its own, concurrently with others up to a limit;
 * more wait in a bounded queue and the rest are answered 503 at once. {@code /ping} never waits.
 * A query whose client disconnects is killed.
 */
public final class ClickHouseHttpServer implements AutoCloseable {
  private final ServerConfig config;
  private final ServerSocket socket;
  private final Authenticator authenticator;
  private final RequestReader reader;
  private final QueryRunner runner;
  private final Answers answers;
  private final ConnectionPool pool;
  private final Sessions sessions;
  private final Killer killer;
  private final RunningQueries running;
  private final ExecutorService engineThreads;
  private final ExecutorService connectionThreads = Executors.newVirtualThreadPerTaskExecutor();
  private final ScheduledExecutorService timer;
  private final Set<Socket> clients = ConcurrentHashMap.newKeySet();
  private final Thread acceptor;
  private final BrowserGuard browsers;
  private volatile boolean closed;

  private ClickHouseHttpServer(EmbeddedClickHouse store, ServerConfig config, ServerSocket socket) {
    this.config = config;
    this.socket = socket;
    this.authenticator = new Authenticator(config.password());
    this.reader = new RequestReader(() -> {
      try {
        return store.stagingDirectory();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    this.pool = new ConnectionPool(store);
    this.sessions = new Sessions(store, config.maxSessions(), config.defaultSessionTimeout(), config.maxSessionTimeout());
    this.killer = new Killer(store);
    this.engineThreads = Executors.newCachedThreadPool(r -> {
      // native calls pin a virtual thread's carrier: the engine's work gets platform threads
      Thread t = new Thread(r, "clickhouse-engine");
      t.setDaemon(true);
      return t;
    });
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "clickhouse-sessions");
      t.setDaemon(true);
      return t;
    });
    this.answers = new Answers(timezone(pool));
    this.running = new RunningQueries(killer);
    this.runner = new QueryRunner(pool, sessions, running, confined(store, pool),
        new Admission(config.maxConcurrentQueries(), config.maxQueuedQueries(), config.queueTimeout()), engineThreads, answers);
    this.browsers = new BrowserGuard(config.password() == null, socket.getLocalPort());
    this.acceptor = new Thread(this::accept, "clickhouse-http-accept");
    this.acceptor.setDaemon(true);
  }

  /** Serves {@code store} on {@code 127.0.0.1:port} (0 picks a free port) without a password: for tests and in-process use. */
  public static ClickHouseHttpServer start(EmbeddedClickHouse store, int port) throws IOException {
    return start(store, ServerConfig.loopbackWithoutPassword(port));
  }

  public static ClickHouseHttpServer start(EmbeddedClickHouse store, ServerConfig config) throws IOException {
    ServerSocket socket = new ServerSocket();
    socket.setReuseAddress(true);
    socket.bind(new InetSocketAddress(config.bind(), config.port()), 128);
    ClickHouseHttpServer server;
    try {
      server = new ClickHouseHttpServer(store, config, socket);
    } catch (RuntimeException e) {
      socket.close();
      throw e;
    }
    server.timer.scheduleWithFixedDelay(server.sessions::expire, 5, 5, TimeUnit.SECONDS);
    server.acceptor.start();
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
    return socket.getLocalPort();
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

  private void accept() {
    while (!closed) {
      try {
        Socket client = socket.accept();
        clients.add(client);
        connectionThreads.execute(() -> {
          try {
            new HttpConnectionHandler(client, this::handle, config.httpTimeouts()).run();
          } finally {
            clients.remove(client);
          }
        });
      } catch (IOException e) {
        if (closed) {
          return;
        }
      }
    }
  }

  private void handle(HttpExchange exchange) throws IOException {
    HttpRequest request = exchange.request();
    String path = request.path();
    String method = request.method();
    Map<String, String> params = request.parameters();
    boolean get = method.equals("GET") || method.equals("HEAD");
    String foreign = browsers.refusal(request);
    if (foreign != null) {
      plain(exchange, 403, "Forbidden: " + foreign + "\n");
      return;
    }
    if (path.equals("/ping") || path.equals("/replicas_status")
        || path.equals("/") && get && !params.containsKey("query")) {
      exchange.response().header("Content-Type", "text/plain; charset=UTF-8");
      exchange.response().send(200, "Ok.\n".getBytes(StandardCharsets.UTF_8));
      return;
    }
    if (!path.equals("/")) {
      plain(exchange, 404, "There is no handle " + path + "\n\nUse / or /ping for health checks.\n"
          + "Send queries with POST or GET /?query=...\n");
      return;
    }
    if (!get && !method.equals("POST")) {
      plain(exchange, 405, "Method " + method + " is not allowed: use GET (read-only) or POST\n");
      return;
    }
    ClickHouseError refused = authenticator.check(request, params);
    if (refused != null) {
      answers.error(exchange, null, refused); // its body is not read: skipped when small, else the connection closes
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
    closed = true;
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    timer.shutdownNow();
    for (Socket client : clients) {
      try {
        client.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
    connectionThreads.shutdownNow();
    running.cancelAll(); // a query still in the engine must end before its session closes
    engineThreads.shutdown();
    try {
      engineThreads.awaitTermination(5, TimeUnit.SECONDS); // within the exit sequence's 10 s for this step
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    sessions.close();
    pool.close();
    killer.close();
  }
}
