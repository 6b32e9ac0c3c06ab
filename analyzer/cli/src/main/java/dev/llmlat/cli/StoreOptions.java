package dev.llmlat.cli;

import com.clickhouse.client.api.ClientConfigProperties;
import dev.llmlat.ingest.imports.StagingTables;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.services.LocalServices;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.ClickHouseStores;
import dev.llmlat.store.StoreConfig;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The options that pick a store: the embedded default, or a server. */
final class StoreOptions {
  @Option(
      names = "--clickhouse-url",
      paramLabel = "URL",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_URL}",
      description =
          "A ClickHouse server (http://host:8123[/db]) instead of the embedded store. Env: LLMLAT_CLICKHOUSE_URL.")
  String url;

  @Option(
      names = "--clickhouse-user",
      paramLabel = "USER",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_USER}",
      description = "Server user (default: default). Env: LLMLAT_CLICKHOUSE_USER.")
  String user;

  @Option(
      names = "--clickhouse-password",
      paramLabel = "PASSWORD",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_PASSWORD}",
      description =
          "Server password; prefer --clickhouse-password-file or the env variable LLMLAT_CLICKHOUSE_PASSWORD (flags show in ps). Never printed.")
  String password;

  @Option(
      names = "--clickhouse-password-file",
      paramLabel = "FILE",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_PASSWORD_FILE}",
      description =
          "Read the server password from FILE (its first line). Env: LLMLAT_CLICKHOUSE_PASSWORD_FILE.")
  Path passwordFile;

  @Option(
      names = "--clickhouse-ssl-root-cert",
      paramLabel = "FILE",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_SSL_ROOT_CERT}",
      description =
          "CA certificate (PEM) to trust for an https:// server. Env: LLMLAT_CLICKHOUSE_SSL_ROOT_CERT.")
  Path sslRootCert;

  @Option(
      names = "--clickhouse-option",
      paramLabel = "KEY=VALUE",
      description = {
        "A setting passed to the ClickHouse driver (clickhouse-jdbc / client-v2 property names, e.g.",
        "ssl_mode=strict, socket_timeout=60000, trust_store=FILE); repeatable. Values are never printed."
      })
  Map<String, String> driverOptions = new LinkedHashMap<>();

  @Spec(Spec.Target.MIXEE)
  CommandSpec mixee;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      defaultValue = "${env:LLMLAT_DATA_DIR}",
      description =
          "Embedded store's data directory (default: $LLMLAT_HOME/data/clickhouse, reached through the store process while `llmlat services` run). Env: LLMLAT_DATA_DIR.")
  Path dataDir;

  @Option(
      names = "--cluster",
      paramLabel = "NAME",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_CLUSTER}",
      description =
          "The server belongs to this ClickHouse cluster: the schema is its cluster variant (ON CLUSTER, replicated local tables, Distributed tables with the usual names; schemas/clickhouse/README.md). Env: LLMLAT_CLICKHOUSE_CLUSTER.")
  String cluster;

  /** What a command does with a store the user names: reads one that exists, or may make one. */
  enum Access {
    /** Opens an existing store only: a directory that is none is refused, never made into one. */
    READ,
    /** Makes a store in a new or empty directory, else opens the store there. */
    WRITE
  }

  /**
   * The store to use, the data directory named by --data-dir (or LLMLAT_DATA_DIR) checked for
   * {@code access} before the engine would make a store in it; the home's own store is made
   * wherever it is missing.
   */
  StoreConfig config(Access access) {
    StoreConfig config = config();
    if (dataDir != null && config.kind() == StoreConfig.Kind.EMBEDDED) {
      check(access, "--data-dir", dataDir);
    }
    return config;
  }

  private static void check(Access access, String option, Path dir) {
    if (access == Access.READ) {
      StoreDirectory.requireStore(option, dir);
    } else {
      StoreDirectory.requireStoreOrEmpty(option, dir);
    }
  }

  /**
   * The store to use, unchecked: for a look that opens nothing ({@link ImportCommand}'s ledger
   * check).
   */
  StoreConfig config() {
    if (url != null && !url.isBlank()) {
      if (dataDir != null) {
        throw new IllegalArgumentException(
            "--data-dir is for the embedded store; it cannot be combined with --clickhouse-url");
      }
      return serverConfig(url);
    }
    // given on the command line without a server: a mistake worth saying; from the environment
    // (set for a server elsewhere) they are ignored, as LLMLAT_CLICKHOUSE_PASSWORD is
    for (String serverOnly :
        new String[] {
          "--clickhouse-password-file", "--clickhouse-ssl-root-cert", "--clickhouse-option"
        }) {
      if (mixee != null
          && mixee.commandLine() != null
          && mixee.commandLine().getParseResult() != null
          && mixee.commandLine().getParseResult().hasMatchedOption(serverOnly)) {
        throw new IllegalArgumentException(
            serverOnly + " is for a server: pass --clickhouse-url too");
      }
    }
    if (dataDir != null && dataDir.toString().isBlank()) {
      throw new IllegalArgumentException(
          "--data-dir (or LLMLAT_DATA_DIR) is empty: name the store's directory");
    }
    if (dataDir == null) {
      // When the services run, their store process owns the data directory: go through it.
      LlmlatHome home = LlmlatHome.fromEnvironment();
      java.util.Optional<StoreConfig> running = Llmlat.services(home).storeConfig();
      if (running.isPresent()) {
        return running.get();
      }
      return StoreConfig.embedded(home.clickhouseData(), EngineLibrary.locate());
    }
    return StoreConfig.embedded(dataDir, EngineLibrary.locate());
  }

  /** A server at {@code serverUrl} with this command's user, password and driver options. */
  private StoreConfig serverConfig(String serverUrl) {
    String pw = password();
    if ((pw == null || pw.isEmpty()) && (user == null || user.isBlank())) {
      // our own store process, named by its URL: its password is in this home, as when found
      // running
      pw = ownStorePassword(serverUrl).orElse(pw);
    }
    return StoreConfig.server(serverUrl, user, pw).withDriverOptions(driverOptions());
  }

  /**
   * Whether {@code location} names a server (a URL) rather than an embedded store's data directory.
   */
  static boolean isServerUrl(String location) {
    return location.contains("://") || location.startsWith("jdbc:");
  }

  /**
   * Opens another store than this command's own, named by a server URL (with this command's
   * credentials and driver options) or an embedded data directory, and brings its schema up to
   * date; for commands that read two stores ({@code diff --a-store --b-store}).
   */
  ClickHouseStore open(String option, String location) {
    if (!isServerUrl(location)) {
      StoreDirectory.requireStore(option, Path.of(location));
      return migrated(
          StoreConfig.embedded(Path.of(location), EngineLibrary.locate()),
          SchemaMigrator.bundled());
    }
    return migrated(
        serverConfig(location),
        cluster == null || cluster.isBlank()
            ? SchemaMigrator.bundled()
            : SchemaMigrator.bundledForCluster(cluster));
  }

  /** The password of this home's running store when {@code serverUrl} is that store's URL. */
  private static java.util.Optional<String> ownStorePassword(String serverUrl) {
    LocalServices services = Llmlat.services(LlmlatHome.fromEnvironment());
    return services
        .storeConfig()
        .filter(
            own ->
                own.url()
                    .equals(
                        serverUrl.startsWith("jdbc:clickhouse:")
                            ? serverUrl.substring(16)
                            : serverUrl))
        .map(StoreConfig::password);
  }

  /** The migrations for this store: the cluster variant with --cluster. */
  SchemaMigrator migrator() {
    if (cluster == null || cluster.isBlank()) {
      return SchemaMigrator.bundled();
    }
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException(
          "--cluster needs a ClickHouse server of that cluster (--clickhouse-url); the embedded store is one node");
    }
    return SchemaMigrator.bundledForCluster(cluster);
  }

  /** The password: from the flag or LLMLAT_CLICKHOUSE_PASSWORD, or the file's first line. */
  private String password() {
    if (passwordFile == null) {
      return password;
    }
    if (password != null && !password.isEmpty()) {
      throw new IllegalArgumentException(
          "give the ClickHouse password one way: --clickhouse-password (or LLMLAT_CLICKHOUSE_PASSWORD)"
              + " or --clickhouse-password-file, not both");
    }
    try {
      return Files.readString(passwordFile, StandardCharsets.UTF_8).lines().findFirst().orElse("");
    } catch (IOException | java.io.UncheckedIOException e) {
      throw new IllegalArgumentException(
          "ClickHouse password file "
              + passwordFile
              + " cannot be read: "
              + e.getClass().getSimpleName()
              + (e instanceof java.nio.file.NoSuchFileException ? " (no such file)" : ""));
    }
  }

  private Map<String, String> driverOptions() {
    Map<String, String> all = new LinkedHashMap<>(driverOptions);
    if (sslRootCert != null) {
      if (!Files.isReadable(sslRootCert)) {
        throw new IllegalArgumentException(
            "--clickhouse-ssl-root-cert " + sslRootCert + " is not a readable file");
      }
      all.put(
          ClientConfigProperties.CA_CERTIFICATE.getKey(), sslRootCert.toAbsolutePath().toString());
    }
    return all;
  }

  /**
   * Opens an existing store for reading, brings its schema up to date and drops the staging tables
   * interrupted imports left ({@link #dropOrphanStagingTables}).
   */
  ClickHouseStore open() {
    SchemaMigrator migrator = migrator();
    return migrated(config(Access.READ), migrator);
  }

  /** As {@link #open()}, for a command that writes: makes the store in a new or empty directory. */
  ClickHouseStore openForWriting() {
    SchemaMigrator migrator = migrator();
    return migrated(config(Access.WRITE), migrator);
  }

  private ClickHouseStore migrated(StoreConfig config, SchemaMigrator migrator) {
    ClickHouseStore store = connect(config);
    try {
      migrator.migrate(store);
      dropOrphanStagingTables(store);
      return store;
    } catch (RuntimeException e) {
      store.close();
      throw config.kind() == StoreConfig.Kind.SERVER ? ServerFailure.of(config, e) : e;
    }
  }

  /**
   * Opens the store {@code config} names; a server must prove it is ClickHouse, and a failure to
   * reach one says in a line what went wrong ({@link ServerFailure}).
   */
  static ClickHouseStore connect(StoreConfig config) {
    if (config.kind() != StoreConfig.Kind.SERVER) {
      return ClickHouseStores.open(config);
    }
    ClickHouseStore store;
    try {
      store = ClickHouseStores.open(config);
    } catch (RuntimeException e) {
      throw ServerFailure.of(config, e);
    }
    try {
      ServerFailure.requireClickHouse(store, config);
      return store;
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
  }

  /**
   * Drops the staging tables of imports that can no longer be running (killed before their commit
   * dropped them), saying so in one line on stderr. Every command that opens the store does it, so
   * they go at the next start of anything; with none it costs one query of system.tables.
   */
  void dropOrphanStagingTables(ClickHouseStore store) {
    PrintWriter err =
        mixee != null && mixee.commandLine() != null
            ? mixee.commandLine().getErr()
            : new PrintWriter(System.err, true);
    String command = mixee != null ? mixee.qualifiedName() : "llmlat";
    StagingTables.dropOrphans(
        store,
        line -> {
          err.println(command + ": " + line);
          err.flush();
        });
  }
}
