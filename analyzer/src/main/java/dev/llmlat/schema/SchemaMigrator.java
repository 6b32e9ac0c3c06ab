package dev.llmlat.schema;

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

/**
 * Applies the numbered migrations in {@code schemas/clickhouse} that a store lacks, and records
 * each in {@code llmlat_migrations}. Idempotent; refuses to run when an applied migration's text
 * has changed since.
 */
public final class SchemaMigrator {
  static final String RESOURCE_DIR = "schemas/clickhouse/";
  static final String TABLE = "llmlat_migrations";

  private final List<Migration> migrations;

  public SchemaMigrator(List<Migration> migrations) {
    this.migrations = List.copyOf(migrations);
  }

  /** The migrations shipped in the {@code llmlat-schemas} jar, in order. */
  public static SchemaMigrator bundled() {
    String index = resource("migrations.txt");
    List<Migration> migrations = new ArrayList<>();
    for (String line : index.split("\n")) {
      String file = line.strip();
      if (!file.isEmpty() && !file.startsWith("#")) {
        migrations.add(Migration.of(file, resource(file)));
      }
    }
    return new SchemaMigrator(migrations);
  }

  public List<Migration> migrations() {
    return migrations;
  }

  /** What one run did. */
  public record Outcome(List<Migration> applied, int alreadyApplied) {}

  /** Brings {@code store}'s schema up to date. */
  public Outcome migrate(ClickHouseStore store) {
    store.execute(
        "CREATE TABLE IF NOT EXISTS " + TABLE + " (Version UInt32, Name String, Checksum String,"
            + " AppliedAt DateTime64(3)) ENGINE = ReplacingMergeTree(AppliedAt) ORDER BY Version");
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
              "schema migration " + migration.version() + "_" + migration.name() + " changed after it was applied to "
                  + store.description() + ": add a new migration instead of editing an applied one");
        }
        already++;
        continue;
      }
      for (String statement : migration.statements()) {
        store.execute(statement);
      }
      store.execute(
          "INSERT INTO " + TABLE + " VALUES (" + migration.version() + ", '" + migration.name() + "', '"
              + migration.checksum() + "', now64(3))");
      applied.add(migration);
    }
    return new Outcome(applied, already);
  }

  private static String resource(String name) {
    try (InputStream in = SchemaMigrator.class.getClassLoader().getResourceAsStream(RESOURCE_DIR + name)) {
      if (in == null) {
        throw new IllegalStateException("missing " + RESOURCE_DIR + name + " on the classpath (is llmlat-schemas built?)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
