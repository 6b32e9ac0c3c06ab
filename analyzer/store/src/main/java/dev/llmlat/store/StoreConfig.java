package dev.llmlat.store;

import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * Which ClickHouse to use and how to reach it, validated on construction. Build one with {@link
 * #embedded} or {@link #server}; open it with {@link ClickHouseStores#open}.
 *
 * <p>{@link #toString()} never shows the password.
 */
public final class StoreConfig {

  /** The two kinds of store. */
  public enum Kind {
    /** chDB in this process, owning a data directory. */
    EMBEDDED,
    /** A ClickHouse server (or llmlat's store process) over HTTP, through the official driver. */
    SERVER
  }

  private final Kind kind;
  private final Path dataDir;
  private final Path engineLibrary;
  private final String url;
  private final String user;
  private final String password;
  private final Map<String, String> options;

  private StoreConfig(
      Kind kind,
      Path dataDir,
      Path engineLibrary,
      String url,
      String user,
      String password,
      Map<String, String> options) {
    this.kind = kind;
    this.dataDir = dataDir;
    this.engineLibrary = engineLibrary;
    this.url = url;
    this.user = user;
    this.password = password;
    this.options = Map.copyOf(options);
  }

  /**
   * The embedded engine at {@code engineLibrary} ({@code libchdb.so}), keeping data in {@code
   * dataDir}.
   */
  public static StoreConfig embedded(Path dataDir, Path engineLibrary) {
    Objects.requireNonNull(dataDir, "dataDir");
    Objects.requireNonNull(engineLibrary, "engineLibrary");
    return new StoreConfig(
        Kind.EMBEDDED,
        dataDir.toAbsolutePath().normalize(),
        engineLibrary,
        null,
        null,
        null,
        Map.of());
  }

  /**
   * A server at {@code url}: {@code http://host:port[/database]}, or the same with the JDBC prefix
   * {@code jdbc:clickhouse:}. {@code user} defaults to {@code default}; {@code password} may be
   * empty.
   */
  public static StoreConfig server(String url, String user, String password) {
    Objects.requireNonNull(url, "url");
    String http =
        url.startsWith("jdbc:clickhouse:") ? url.substring("jdbc:clickhouse:".length()) : url;
    URI uri;
    try {
      uri = URI.create(http);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "ClickHouse URL '" + url + "' is not a URL: " + e.getMessage());
    }
    if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
      throw new IllegalArgumentException(
          "ClickHouse URL '"
              + url
              + "' must start with http://, https:// or jdbc:clickhouse:http(s)://");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("ClickHouse URL '" + url + "' has no host");
    }
    if (uri.getUserInfo() != null) {
      throw new IllegalArgumentException(
          "ClickHouse URL must not carry credentials; pass --clickhouse-user/--clickhouse-password"
              + " or LLMLAT_CLICKHOUSE_USER/LLMLAT_CLICKHOUSE_PASSWORD");
    }
    String u = user == null || user.isBlank() ? "default" : user;
    return new StoreConfig(
        Kind.SERVER, null, null, http, u, password == null ? "" : password, Map.of());
  }

  /**
   * This server config with driver options (client-v2 / clickhouse-jdbc property names, e.g. {@code
   * sslrootcert}, {@code ssl_mode}, {@code socket_timeout}) passed through to the driver. User and
   * password have their own settings and are refused here.
   */
  public StoreConfig withDriverOptions(Map<String, String> driverOptions) {
    if (kind != Kind.SERVER && !driverOptions.isEmpty()) {
      throw new IllegalArgumentException(
          "ClickHouse driver options are for a server (--clickhouse-url); the embedded store takes none");
    }
    for (String key : driverOptions.keySet()) {
      String k = key.toLowerCase(java.util.Locale.ROOT);
      if (k.equals("user") || k.equals("username") || k.equals("password")) {
        throw new IllegalArgumentException(
            "ClickHouse driver option '"
                + key
                + "': pass it with --clickhouse-user,"
                + " --clickhouse-password-file or LLMLAT_CLICKHOUSE_USER/LLMLAT_CLICKHOUSE_PASSWORD");
      }
    }
    Map<String, String> all = new java.util.TreeMap<>(options);
    all.putAll(driverOptions);
    return new StoreConfig(kind, dataDir, engineLibrary, url, user, password, all);
  }

  /** Options for the driver; their values may be secrets (a key store password): never printed. */
  public Map<String, String> driverOptions() {
    return options;
  }

  public Kind kind() {
    return kind;
  }

  /** The embedded engine's data directory; {@code null} for a server. */
  public Path dataDir() {
    return dataDir;
  }

  /** The embedded engine's library; {@code null} for a server. */
  public Path engineLibrary() {
    return engineLibrary;
  }

  /** The server's HTTP URL ({@code http(s)://host:port[/database]}); {@code null} when embedded. */
  public String url() {
    return url;
  }

  public String user() {
    return user;
  }

  /** The password; never printed. */
  public String password() {
    return password;
  }

  @Override
  public String toString() {
    return kind == Kind.EMBEDDED
        ? "embedded ClickHouse (chDB) at " + dataDir
        : "ClickHouse server " + url + " as " + user;
  }
}
