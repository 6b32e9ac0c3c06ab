package dev.llmlat.cli;

import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.QueryResult;
import dev.llmlat.store.StoreConfig;
import dev.llmlat.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * A ClickHouse server that could not be reached or is no ClickHouse, said in one line naming the
 * URL and the cause: connection refused, timed out, authentication failed, or what answered
 * instead. The driver's own message often says none of that ("does not answer /ping" for a refused
 * port and a silent one alike), so where its exceptions do not tell, a plain HTTP request asks.
 */
final class ServerFailure extends StoreException {
  private static final long serialVersionUID = 1L;

  /** The longest the probe waits; less when the user set the driver's socket_timeout lower. */
  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);

  /** The column name the check asks for: what answers with it ran the query. */
  private static final String VERSION_COLUMN = "llmlat_server_version";

  private ServerFailure(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * What to throw for {@code e}, met opening or first using the server of {@code config}: a
   * ServerFailure naming the cause, or {@code e} itself where ClickHouse answered and its message
   * says why (a missing privilege, say).
   */
  static RuntimeException of(StoreConfig config, RuntimeException e) {
    if (e instanceof ServerFailure) {
      return e;
    }
    String cause = fromCauses(config, e);
    if (cause == null) {
      cause = probe(config);
    }
    return cause == null || cause.isEmpty() ? e : new ServerFailure(message(config, cause), e);
  }

  /**
   * Refuses a server whose answer to a query is not ClickHouse's (anything that answers 200 passes
   * the driver's ping).
   */
  static void requireClickHouse(ClickHouseStore store, StoreConfig config) {
    QueryResult version;
    try {
      version = store.query("SELECT version() AS " + VERSION_COLUMN);
    } catch (RuntimeException e) {
      throw of(config, e);
    }
    if (version.columns().size() == 1
        && version.columns().get(0).name().equals(VERSION_COLUMN)
        && version.rows().size() == 1) {
      return;
    }
    String why = probe(config);
    throw new ServerFailure(
        message(
            config,
            why == null || why.isEmpty()
                ? "not a ClickHouse server: its answer to SELECT version() is no ClickHouse result"
                : why),
        null);
  }

  private static String message(StoreConfig config, String cause) {
    return cause.startsWith("not a ClickHouse server")
        ? config.url() + " is " + cause
        : "ClickHouse server " + config.url() + ": " + cause;
  }

  /**
   * The cause as the exceptions tell it; {@code ""} where ClickHouse itself answered (its message
   * stands), {@code null} where they do not tell.
   */
  private static String fromCauses(StoreConfig config, Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String message = String.valueOf(t.getMessage());
      if (message.contains("Code: 516")
          || message.contains("AUTHENTICATION_FAILED")
          || message.contains("Authentication failed")) {
        return "authentication failed for user "
            + config.user()
            + " (check --clickhouse-user and --clickhouse-password, --clickhouse-password-file or LLMLAT_CLICKHOUSE_PASSWORD)";
      }
      if (t instanceof ConnectException) {
        return message.toLowerCase(Locale.ROOT).contains("refused")
            ? "connection refused (is the server running, on that port?)"
            : "cannot connect: " + message;
      }
      if (t instanceof UnknownHostException) {
        return "unknown host " + URI.create(config.url()).getHost();
      }
      if (t instanceof SocketTimeoutException || t instanceof TimeoutException) {
        return "timed out: no answer (" + message + ")";
      }
      if (t instanceof javax.net.ssl.SSLException) {
        return "TLS failed: " + message + " (--clickhouse-ssl-root-cert names the CA to trust)";
      }
      if (t instanceof com.clickhouse.client.api.ServerException) {
        return "";
      }
    }
    return null;
  }

  /**
   * Asks the server a query over plain HTTP, without credentials, and says what that shows: no
   * connection, no answer in time, or an answer without ClickHouse's headers (which every answer of
   * ClickHouse's HTTP interface has, an error one too). {@code null} where it looks like
   * ClickHouse, or the probe cannot tell (TLS the JDK's defaults do not trust).
   */
  private static String probe(StoreConfig config) {
    Duration timeout = timeout(config);
    URI base = URI.create(config.url());
    URI uri = URI.create(base.getScheme() + "://" + base.getRawAuthority() + "/?query=SELECT%201");
    try (HttpClient http = HttpClient.newBuilder().connectTimeout(timeout).build()) {
      HttpResponse<InputStream> response =
          http.send(
              HttpRequest.newBuilder(uri).timeout(timeout).GET().build(),
              HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream ignored = response.body()) {
        boolean clickHouse =
            response.headers().map().keySet().stream()
                .anyMatch(name -> name.toLowerCase(Locale.ROOT).startsWith("x-clickhouse-"));
        if (clickHouse) {
          return null;
        }
        return "not a ClickHouse server: it answered HTTP "
            + response.statusCode()
            + " with "
            + response.headers().firstValue("Content-Type").orElse("no Content-Type")
            + " (and no X-ClickHouse headers)";
      }
    } catch (HttpConnectTimeoutException e) {
      return "timed out: no connection within " + seconds(timeout);
    } catch (HttpTimeoutException e) {
      return "timed out: it accepted the connection but sent no answer within " + seconds(timeout);
    } catch (ConnectException e) {
      return "connection refused (is the server running, on that port?)";
    } catch (javax.net.ssl.SSLException e) {
      return null;
    } catch (IOException e) {
      return e.getCause() instanceof UnknownHostException
          ? "unknown host " + base.getHost()
          : "cannot connect: " + e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** The driver's socket_timeout (ms) when the user set one below the probe's own limit. */
  private static Duration timeout(StoreConfig config) {
    String ms = config.driverOptions().get("socket_timeout");
    try {
      Duration set = ms == null ? PROBE_TIMEOUT : Duration.ofMillis(Long.parseLong(ms.strip()));
      return set.isPositive() && set.compareTo(PROBE_TIMEOUT) < 0 ? set : PROBE_TIMEOUT;
    } catch (NumberFormatException e) {
      return PROBE_TIMEOUT;
    }
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0
        ? d.toSeconds() + " s"
        : String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
  }
}
