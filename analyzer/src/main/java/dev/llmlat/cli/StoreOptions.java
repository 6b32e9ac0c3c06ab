package dev.llmlat.cli;

import dev.llmlat.home.EngineLibrary;
import dev.llmlat.home.LlmlatHome;
import dev.llmlat.schema.SchemaMigrator;
import dev.llmlat.services.LocalServices;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.ClickHouseStores;
import dev.llmlat.store.StoreConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options that pick a store: the embedded default, or a server. */
final class StoreOptions {
  @Option(
      names = "--clickhouse-url",
      paramLabel = "URL",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_URL}",
      description = "A ClickHouse server (http://host:8123[/db]) instead of the embedded store. Env: LLMLAT_CLICKHOUSE_URL.")
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
      description = "Server password; prefer the env variable LLMLAT_CLICKHOUSE_PASSWORD (flags show in ps). Never printed.")
  String password;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      defaultValue = "${env:LLMLAT_DATA_DIR}",
      description = "Embedded store's data directory (default: $LLMLAT_HOME/data/clickhouse, reached through the store process while `llmlat services` run). Env: LLMLAT_DATA_DIR.")
  Path dataDir;

  @Option(
      names = "--cluster",
      paramLabel = "NAME",
      defaultValue = "${env:LLMLAT_CLICKHOUSE_CLUSTER}",
      description = "The server belongs to this ClickHouse cluster: the schema is its cluster variant (ON CLUSTER, replicated local tables, Distributed tables with the usual names; schemas/clickhouse/README.md). Env: LLMLAT_CLICKHOUSE_CLUSTER.")
  String cluster;

  StoreConfig config() {
    if (url != null && !url.isBlank()) {
      if (dataDir != null) {
        throw new IllegalArgumentException("--data-dir is for the embedded store; it cannot be combined with --clickhouse-url");
      }
      return StoreConfig.server(url, user, password);
    }
    if (dataDir == null) {
      // When the services run, their store process owns the data directory: go through it.
      LlmlatHome home = LlmlatHome.fromEnvironment();
      java.util.Optional<String> running = new LocalServices(home).storeUrl();
      if (running.isPresent()) {
        return StoreConfig.server(running.get(), null, null);
      }
      return StoreConfig.embedded(home.clickhouseData(), EngineLibrary.locate());
    }
    return StoreConfig.embedded(dataDir, EngineLibrary.locate());
  }

  /** The migrations for this store: the cluster variant with --cluster. */
  SchemaMigrator migrator() {
    if (cluster == null || cluster.isBlank()) {
      return SchemaMigrator.bundled();
    }
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException("--cluster needs a ClickHouse server of that cluster (--clickhouse-url); the embedded store is one node");
    }
    return SchemaMigrator.bundledForCluster(cluster);
  }

  /** Opens the store and brings its schema up to date. */
  ClickHouseStore open() {
    SchemaMigrator migrator = migrator();
    ClickHouseStore store = ClickHouseStores.open(config());
    try {
      migrator.migrate(store);
      return store;
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
  }
}
