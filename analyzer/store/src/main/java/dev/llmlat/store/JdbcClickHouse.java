package dev.llmlat.store;

import com.clickhouse.client.api.Client;
import com.clickhouse.client.api.insert.InsertSettings;
import com.clickhouse.client.api.query.QueryResponse;
import com.clickhouse.client.api.query.QuerySettings;
import com.clickhouse.data.ClickHouseFormat;
import dev.llmlat.store.internal.TabSeparatedDecoder;
import dev.llmlat.store.internal.TabSeparatedRows;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A ClickHouse server (23.8 or newer, or llmlat's own store process) through the official driver:
 * statements go through JDBC ({@code clickhouse-jdbc}); queries and bulk inserts through its
 * client-v2, with results read as {@code TabSeparatedWithNamesAndTypes} so every value renders
 * exactly as on the embedded store.
 */
public final class JdbcClickHouse implements ClickHouseStore {
  private static final long TIMEOUT_SECONDS = 300;

  private final StoreConfig config;
  private final Connection jdbc;
  private final Client client;

  private JdbcClickHouse(StoreConfig config, Connection jdbc, Client client) {
    this.config = config;
    this.jdbc = jdbc;
    this.client = client;
  }

  /** Connects and checks the server answers; the message names the URL (never the password). */
  public static JdbcClickHouse open(StoreConfig config) {
    if (config.kind() != StoreConfig.Kind.SERVER) {
      throw new IllegalArgumentException("not a server config: " + config);
    }
    URI uri = URI.create(config.url());
    String database =
        uri.getPath() == null || uri.getPath().length() <= 1
            ? "default"
            : uri.getPath().substring(1);
    // Compression is off unless the URL asks for it: spans are small next to a LAN's bandwidth,
    // and llmlat's own store process is on the same machine (it speaks compress=1 too).
    boolean compress = uri.getQuery() != null && uri.getQuery().contains("compress=true");
    String endpoint = uri.getScheme() + "://" + uri.getHost() + ":" + port(uri);
    Client client =
        new Client.Builder()
            .setOptions(config.driverOptions()) // TLS and other settings the user passes through
            .addEndpoint(endpoint)
            .setUsername(config.user())
            .setPassword(config.password())
            .setDefaultDatabase(database)
            .compressServerResponse(compress)
            .compressClientRequest(false)
            .build();
    Properties props = new Properties();
    props.putAll(config.driverOptions());
    props.setProperty("user", config.user());
    props.setProperty("password", config.password());
    props.setProperty("compress", Boolean.toString(compress));
    Connection jdbc;
    try {
      if (!client.ping(10_000)) {
        // a refused password fails the ping too: the server's own answer says which it was
        String why = "does not answer /ping (is it running?)";
        try (QueryResponse r = client.query("SELECT 1").get(10, TimeUnit.SECONDS)) {
          why = "answers /ping with an error";
        } catch (Exception e) {
          Throwable cause =
              e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
          if (cause instanceof com.clickhouse.client.api.ServerException) {
            why = "refused: " + redact(cause.getMessage(), config);
          }
        }
        client.close();
        throw new StoreException("ClickHouse server " + endpoint + " " + why);
      }
      jdbc = DriverManager.getConnection("jdbc:clickhouse:" + endpoint + "/" + database, props);
    } catch (SQLException e) {
      client.close();
      throw new StoreException(
          "cannot connect to ClickHouse server "
              + endpoint
              + " as "
              + config.user()
              + ": "
              + redact(e.getMessage(), config),
          e);
    } catch (RuntimeException e) {
      client.close();
      if (e instanceof StoreException) {
        throw e;
      }
      throw new StoreException(
          "cannot connect to ClickHouse server " + endpoint + ": " + redact(e.getMessage(), config),
          e);
    }
    return new JdbcClickHouse(config, jdbc, client);
  }

  private static int port(URI uri) {
    if (uri.getPort() > 0) {
      return uri.getPort();
    }
    return "https".equals(uri.getScheme()) ? 8443 : 8123;
  }

  /** The JDBC connection, for callers that want plain JDBC. */
  public Connection jdbc() {
    return jdbc;
  }

  @Override
  public void execute(String sql) {
    synchronized (jdbc) {
      try (Statement statement = jdbc.createStatement()) {
        statement.execute(sql);
      } catch (SQLException e) {
        throw new StoreException(
            redact(
                description()
                    + " refused: "
                    + e.getMessage()
                    + "\n  in: "
                    + EmbeddedClickHouse.abbreviate(sql),
                config),
            e);
      }
    }
  }

  @Override
  public QueryResult query(String sql, Map<String, ?> params) {
    QuerySettings settings =
        new QuerySettings().setFormat(ClickHouseFormat.TabSeparatedWithNamesAndTypes);
    try (QueryResponse response =
            client.query(sql, parameters(params), settings).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        InputStream in = response.getInputStream()) {
      return TabSeparatedDecoder.decode(in.readAllBytes());
    } catch (Exception e) {
      throw failure(sql, e);
    }
  }

  /**
   * The server's reply read as it arrives (the driver hands its HTTP body over unbuffered). Closed
   * before its end, the connection is dropped rather than read to the end (the driver's own close
   * would read all of it), and the server stops the query.
   */
  @Override
  public RowStream stream(String sql, Map<String, ?> params) {
    QuerySettings settings =
        new QuerySettings().setFormat(ClickHouseFormat.TabSeparatedWithNamesAndTypes);
    QueryResponse response;
    try {
      response =
          client.query(sql, parameters(params), settings).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw failure(sql, e);
    }
    InputStream raw = response.getInputStream();
    InputStream body =
        new java.io.FilterInputStream(raw) {
          @Override
          public void close() {} // the response is closed instead
        };
    try {
      return new TabSeparatedRows(
          body,
          new TabSeparatedRows.Chunks() {
            @Override
            public InputStream next() {
              return null;
            }

            @Override
            public void close(boolean whole) {
              if (!whole) {
                stop(response, raw);
              }
              try {
                response.close();
              } catch (Exception ignored) {
                // the connection goes either way
              }
            }
          },
          redact(description(), config));
    } catch (StoreException e) {
      throw new StoreException(
          redact(e.getMessage() + "\n  in: " + EmbeddedClickHouse.abbreviate(sql), config), e);
    }
  }

  /**
   * Stops a reply still coming: the HTTP client drops the connection (the server then cancels the
   * query); where the body is wrapped in a way that cannot be aborted (compression), the query is
   * killed by its id, which ends the body.
   */
  private void stop(QueryResponse response, InputStream raw) {
    try {
      if (raw instanceof org.apache.hc.core5.http.io.EofSensorInputStream eof) {
        eof.abort();
        return;
      }
    } catch (java.io.IOException e) {
      // then as below
    }
    String id = response.getQueryId();
    if (id != null && !id.isEmpty()) {
      try (QueryResponse r =
          client
              .query(
                  "KILL QUERY WHERE query_id = {id:String} ASYNC",
                  Map.of("id", id),
                  new QuerySettings())
              .get(30, TimeUnit.SECONDS)) {
        // killed, or already over
      } catch (Exception e) {
        // best effort: the close below reads what is left
      }
    }
  }

  @Override
  public byte[] queryRowBinary(String sql, Map<String, ?> params) {
    QuerySettings settings = new QuerySettings().setFormat(ClickHouseFormat.RowBinary);
    try (QueryResponse response =
            client.query(sql, parameters(params), settings).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        InputStream in = response.getInputStream()) {
      return in.readAllBytes();
    } catch (Exception e) {
      throw failure(sql, e);
    }
  }

  /**
   * The driver sends these as {@code param_name} as they are, and the server parses them in its
   * escaped format: a tab or backslash must arrive escaped (measured with client-v2 0.10.0).
   */
  private static Map<String, Object> parameters(Map<String, ?> params) {
    Map<String, Object> escaped = new java.util.LinkedHashMap<>();
    params.forEach((k, v) -> escaped.put(QueryParameters.name(k), QueryParameters.escaped(v)));
    return escaped;
  }

  @Override
  public void insertRowBinary(
      String table, List<String> columns, byte[] rows, String deduplicationToken) {
    InsertSettings settings = new InsertSettings();
    if (deduplicationToken != null) {
      settings.setDeduplicationToken(InsertStatements.token(deduplicationToken));
    }
    try {
      client
          .insert(
              InsertStatements.identifier(table),
              columns,
              new ByteArrayInputStream(rows),
              ClickHouseFormat.RowBinary,
              settings)
          .get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
          .close();
    } catch (Exception e) {
      throw failure("INSERT INTO " + table, e);
    }
  }

  private StoreException failure(String sql, Exception e) {
    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    String why =
        cause instanceof TimeoutException
            ? "timed out after " + TIMEOUT_SECONDS + " s"
            : String.valueOf(cause.getMessage());
    return new StoreException(
        redact(
            description() + " refused: " + why + "\n  in: " + EmbeddedClickHouse.abbreviate(sql),
            config),
        cause);
  }

  /**
   * A driver's message with the password (and secret driver option values) blotted out, should the
   * driver or a proxy ever echo one back: messages end up in logs and terminals.
   */
  static String redact(String message, StoreConfig config) {
    if (message == null) {
      return "";
    }
    String result = message;
    List<String> secrets = new java.util.ArrayList<>();
    secrets.add(config.password());
    config
        .driverOptions()
        .forEach(
            (k, v) -> {
              String key = k.toLowerCase(java.util.Locale.ROOT);
              if (key.contains("password") || key.contains("secret") || key.contains("token")) {
                secrets.add(v);
              }
            });
    for (String secret : secrets) {
      if (secret != null && !secret.isEmpty()) {
        result = result.replace(secret, "******");
      }
    }
    return result;
  }

  @Override
  public String description() {
    return "ClickHouse server " + config.url();
  }

  @Override
  public void close() {
    try {
      jdbc.close();
    } catch (SQLException ignored) {
      // closing anyway
    } finally {
      client.close();
    }
  }
}
