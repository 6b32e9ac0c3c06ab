package dev.llmlat.store.http;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * How the store's HTTP interface listens and what it allows.
 *
 * @param bind the address to listen on
 * @param port the TCP port (0: any free one)
 * @param password the password clients must give as user {@code default}; null serves without one,
 *     which only a loopback bind may do
 * @param maxConcurrentQueries queries the engine runs at once (each on its own engine session)
 * @param maxQueuedQueries queries that may wait for a turn; more are answered 503 at once
 * @param queueTimeout how long a query waits for its turn before a 503
 * @param maxSessions open {@code session_id} sessions at once
 * @param defaultSessionTimeout a session's idle timeout when the client names none
 * @param maxSessionTimeout the longest idle timeout a client may ask for
 * @param headerTimeout a request's line and headers must arrive within this from their first byte,
 *     or the connection is answered 408 and closed (a slowloris client is cut)
 * @param keepAliveTimeout how long a connection may wait for its next request (ClickHouse's
 *     keep_alive_timeout, 10 s)
 * @param receiveTimeout the longest pause within a request body (ClickHouse's http_receive_timeout,
 *     30 s)
 */
public record ServerConfig(
    InetAddress bind,
    int port,
    String password,
    int maxConcurrentQueries,
    int maxQueuedQueries,
    Duration queueTimeout,
    int maxSessions,
    Duration defaultSessionTimeout,
    Duration maxSessionTimeout,
    Duration headerTimeout,
    Duration keepAliveTimeout,
    Duration receiveTimeout) {

  public ServerConfig {
    Objects.requireNonNull(bind, "bind");
    if (password == null && !bind.isLoopbackAddress()) {
      throw new IllegalArgumentException(
          "serving without a password is for a loopback address only, not "
              + bind.getHostAddress());
    }
    if (password != null && password.isEmpty()) {
      throw new IllegalArgumentException("the store's password must not be empty");
    }
    if (maxConcurrentQueries < 1 || maxQueuedQueries < 0 || maxSessions < 0) {
      throw new IllegalArgumentException("concurrency limits must be positive");
    }
    checkTimeout("header", headerTimeout);
    checkTimeout("keep-alive", keepAliveTimeout);
    checkTimeout("receive", receiveTimeout);
  }

  private static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration DEFAULT_KEEP_ALIVE_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration DEFAULT_RECEIVE_TIMEOUT = Duration.ofSeconds(30);

  private static void checkTimeout(String what, Duration d) {
    Objects.requireNonNull(d, what);
    // whole milliseconds in an int, as socket timeouts are; 0 would mean "never"
    if (d.toMillis() < 1 || d.compareTo(Duration.ofMillis(Integer.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException(
          "the HTTP " + what + " timeout must be between 1 ms and 24 days, not " + d);
    }
  }

  /** The default connection timeouts. */
  public ServerConfig(
      InetAddress bind,
      int port,
      String password,
      int maxConcurrentQueries,
      int maxQueuedQueries,
      Duration queueTimeout,
      int maxSessions,
      Duration defaultSessionTimeout,
      Duration maxSessionTimeout) {
    this(
        bind,
        port,
        password,
        maxConcurrentQueries,
        maxQueuedQueries,
        queueTimeout,
        maxSessions,
        defaultSessionTimeout,
        maxSessionTimeout,
        DEFAULT_HEADER_TIMEOUT,
        DEFAULT_KEEP_ALIVE_TIMEOUT,
        DEFAULT_RECEIVE_TIMEOUT);
  }

  /** Loopback, no password, the default limits: for tests and for a process serving itself. */
  public static ServerConfig loopbackWithoutPassword(int port) {
    return new ServerConfig(
        InetAddress.getLoopbackAddress(),
        port,
        null,
        8,
        64,
        Duration.ofSeconds(30),
        64,
        Duration.ofSeconds(60),
        Duration.ofHours(1));
  }

  public ServerConfig withPassword(String newPassword) {
    return new ServerConfig(
        bind,
        port,
        newPassword,
        maxConcurrentQueries,
        maxQueuedQueries,
        queueTimeout,
        maxSessions,
        defaultSessionTimeout,
        maxSessionTimeout,
        headerTimeout,
        keepAliveTimeout,
        receiveTimeout);
  }

  public ServerConfig withBind(InetAddress address) {
    return new ServerConfig(
        address,
        port,
        password,
        maxConcurrentQueries,
        maxQueuedQueries,
        queueTimeout,
        maxSessions,
        defaultSessionTimeout,
        maxSessionTimeout,
        headerTimeout,
        keepAliveTimeout,
        receiveTimeout);
  }

  public ServerConfig withLimits(int concurrent, int queued, Duration timeout) {
    return new ServerConfig(
        bind,
        port,
        password,
        concurrent,
        queued,
        timeout,
        maxSessions,
        defaultSessionTimeout,
        maxSessionTimeout,
        headerTimeout,
        keepAliveTimeout,
        receiveTimeout);
  }

  public ServerConfig withTimeouts(Duration header, Duration keepAlive, Duration receive) {
    return new ServerConfig(
        bind,
        port,
        password,
        maxConcurrentQueries,
        maxQueuedQueries,
        queueTimeout,
        maxSessions,
        defaultSessionTimeout,
        maxSessionTimeout,
        header,
        keepAlive,
        receive);
  }

  public boolean requiresPassword() {
    return password != null;
  }

  @Override
  public String toString() { // never the password
    return "ServerConfig["
        + bind.getHostAddress()
        + ":"
        + port
        + (password == null ? ", no password" : ", password required")
        + ", "
        + maxConcurrentQueries
        + " concurrent, "
        + maxQueuedQueries
        + " queued]";
  }
}
