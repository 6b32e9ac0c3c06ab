package dev.llmlat.store.schema;

import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.QueryResult;
import dev.llmlat.store.StoreException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Applies the numbered migrations in {@code schemas/clickhouse} that a store lacks, and records
 * each in {@code llmlat_migrations}. Idempotent; refuses to run when an applied migration's text
 * has changed since.
 *
 * <p>For a ClickHouse cluster, {@link #bundledForCluster} applies the cluster variant instead
 * ({@code schemas/clickhouse/cluster}: {@code ON CLUSTER}, replicated local tables, Distributed
 * tables with the user-facing names), with {@code {cluster}} replaced by the cluster's name.
 * Checksums are of the files as shipped, so they do not depend on the name.
 */
public final class SchemaMigrator {
  static final String RESOURCE_DIR = "schemas/clickhouse/";
  static final String CLUSTER_DIR = "cluster/";
  static final String TABLE = "llmlat_migrations";
  private static final Pattern CLUSTER_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}");

  private final List<Migration> migrations;
  private final String cluster; // null: a single server or the embedded engine

  public SchemaMigrator(List<Migration> migrations) {
    this(migrations, null);
  }

  private SchemaMigrator(List<Migration> migrations, String cluster) {
    this.migrations = List.copyOf(migrations);
    this.cluster = cluster;
  }

  /** The migrations shipped in the {@code llmlat-schemas} jar, in order. */
  public static SchemaMigrator bundled() {
    return new SchemaMigrator(load(""), null);
  }

  /** The cluster variant of the shipped migrations, for the servers' cluster {@code cluster}. */
  public static SchemaMigrator bundledForCluster(String cluster) {
    if (cluster == null || !CLUSTER_NAME.matcher(cluster).matches()) {
      throw new IllegalArgumentException(
          "--cluster: not a ClickHouse cluster name (letters, digits, _ . -): '" + cluster + "'");
    }
    return new SchemaMigrator(load(CLUSTER_DIR), cluster);
  }

  /**
   * The migrations of one variant ({@code ""} or {@code "cluster/"}), in the order its
   * migrations.txt lists them.
   */
  static List<Migration> load(String variant) {
    String index = resource(variant + "migrations.txt");
    List<Migration> migrations = new ArrayList<>();
    for (String line : index.split("\n")) {
      String file = line.strip();
      if (!file.isEmpty() && !file.startsWith("#")) {
        migrations.add(Migration.of(file, resource(variant + file)));
      }
    }
    return migrations;
  }

  /** A migration's statements as sent to the store: {@code {cluster}} names the cluster. */
  public List<String> statements(Migration migration) {
    return migration.statements().stream()
        .map(s -> cluster == null ? s : s.replace("{cluster}", cluster))
        .toList();
  }

  private String migrationsTableDdl() {
    String columns = " (Version UInt32, Name String, Checksum String, AppliedAt DateTime64(3))";
    if (cluster == null) {
      return "CREATE TABLE IF NOT EXISTS "
          + TABLE
          + columns
          + " ENGINE = ReplacingMergeTree(AppliedAt) ORDER BY Version";
    }
    // One replica set over all nodes (no {shard} in the path): whichever node the runner reaches
    // sees every record.
    return "CREATE TABLE IF NOT EXISTS "
        + TABLE
        + " ON CLUSTER '"
        + cluster
        + "'"
        + columns
        + " ENGINE = ReplicatedReplacingMergeTree('/clickhouse/llmlat/"
        + cluster
        + "/{database}/"
        + TABLE
        + "', '{replica}', AppliedAt)"
        + " ORDER BY Version";
  }

  public List<Migration> migrations() {
    return migrations;
  }

  /** What one run did. */
  public record Outcome(List<Migration> applied, int alreadyApplied) {}

  /** Brings {@code store}'s schema up to date. */
  public Outcome migrate(ClickHouseStore store) {
    store.execute(migrationsTableDdl());
    Map<Integer, String> recorded = new HashMap<>();
    QueryResult rows = store.query("SELECT Version, Checksum FROM " + TABLE + " FINAL");
    for (List<String> row : rows.rows()) {
      recorded.put(Integer.parseInt(row.get(0)), row.get(1));
    }
    List<Migration> applied = new ArrayList<>();
    int already = 0;
    for (Migration migration : migrations) {
      String checksum = recorded.get(migration.version());
      if (checksum != null) {
        if (!checksum.equals(migration.checksum())) {
          throw new StoreException(
              "schema migration "
                  + migration.version()
                  + "_"
                  + migration.name()
                  + " changed after it was applied to "
                  + store.description()
                  + ": add a new migration instead of editing an applied one"
                  + (cluster == null
                      ? " (or the store was migrated with --cluster)"
                      : " (or the store was migrated without --cluster)"));
        }
        already++;
        continue;
      }
      for (String statement : statements(migration)) {
        store.execute(statement);
      }
      store.execute(
          "INSERT INTO "
              + TABLE
              + " VALUES ("
              + migration.version()
              + ", '"
              + migration.name()
              + "', '"
              + migration.checksum()
              + "', now64(3))");
      applied.add(migration);
    }
    return new Outcome(applied, already);
  }

  private static String resource(String name) {
    try (InputStream in =
        SchemaMigrator.class.getClassLoader().getResourceAsStream(RESOURCE_DIR + name)) {
      if (in == null) {
        throw new IllegalStateException(
            "missing " + RESOURCE_DIR + name + " on the classpath (is llmlat-schemas built?)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
