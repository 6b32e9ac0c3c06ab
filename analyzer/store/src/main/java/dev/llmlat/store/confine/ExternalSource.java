package dev.llmlat.store.confine;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A kind of place outside the store that ClickHouse can reach, as {@code store serve
 * --allow-sources} names it: the engine's grant for it, and the table functions, table and database
 * engines and dictionary sources that reach it. Names are the engine's own, from {@code
 * system.table_functions}, {@code system.table_engines}, {@code system.database_engines} of chDB
 * 26.5; dictionary sources as {@code EXPLAIN AST} prints them (lower case).
 */
public enum ExternalSource {
  URL("URL", List.of("url", "urlCluster"), List.of("URL"), List.of(), List.of("http")),
  S3(
      "S3",
      List.of(
          "s3",
          "s3Cluster",
          "gcs",
          "oss",
          "cosn",
          "iceberg",
          "icebergS3",
          "icebergS3Cluster",
          "icebergCluster",
          "deltaLake",
          "deltaLakeS3",
          "deltaLakeCluster",
          "deltaLakeS3Cluster",
          "hudi",
          "hudiCluster",
          "paimon",
          "paimonS3",
          "paimonCluster",
          "paimonS3Cluster"),
      List.of(
          "S3",
          "S3Queue",
          "GCS",
          "OSS",
          "COSN",
          "Iceberg",
          "IcebergS3",
          "DeltaLake",
          "DeltaLakeS3",
          "Hudi",
          "Paimon",
          "PaimonS3"),
      List.of("S3", "DataLakeCatalog"),
      List.of("s3")),
  AZURE(
      "AZURE",
      List.of(
          "azureBlobStorage",
          "azureBlobStorageCluster",
          "icebergAzure",
          "icebergAzureCluster",
          "deltaLakeAzure",
          "deltaLakeAzureCluster",
          "paimonAzure",
          "paimonAzureCluster"),
      List.of("AzureBlobStorage", "AzureQueue", "IcebergAzure", "DeltaLakeAzure", "PaimonAzure"),
      List.of(),
      List.of()),
  HDFS(
      "HDFS",
      List.of(
          "hdfs",
          "hdfsCluster",
          "icebergHDFS",
          "icebergHDFSCluster",
          "paimonHDFS",
          "paimonHDFSCluster"),
      List.of("HDFS", "IcebergHDFS", "PaimonHDFS"),
      List.of("HDFS"),
      List.of()),
  /**
   * Other ClickHouse servers: {@code remote()}, {@code cluster()}, Distributed, a CLICKHOUSE
   * dictionary source with a host.
   */
  REMOTE(
      "REMOTE",
      List.of("remote", "remoteSecure", "cluster", "clusterAllReplicas", "fileCluster"),
      List.of("Distributed"),
      List.of(),
      List.of("clickhouse")),
  MYSQL("MYSQL", List.of("mysql"), List.of("MySQL"), List.of("MySQL"), List.of("mysql")),
  POSTGRESQL(
      "POSTGRES",
      List.of("postgresql"),
      List.of("PostgreSQL", "MaterializedPostgreSQL"),
      List.of("PostgreSQL", "MaterializedPostgreSQL"),
      List.of("postgresql")),
  MONGODB("MONGO", List.of("mongodb"), List.of("MongoDB"), List.of(), List.of("mongodb")),
  REDIS("REDIS", List.of("redis"), List.of("Redis"), List.of(), List.of("redis")),
  JDBC("JDBC", List.of("jdbc"), List.of("JDBC"), List.of(), List.of("jdbc")),
  ODBC("ODBC", List.of("odbc"), List.of("ODBC"), List.of(), List.of("odbc")),
  /**
   * SQLite databases are files of the host: allowing them lets clients read any SQLite file the
   * server's user can.
   */
  SQLITE("SQLITE", List.of("sqlite"), List.of("SQLite"), List.of("SQLite"), List.of()),
  KAFKA("KAFKA", List.of(), List.of("Kafka"), List.of(), List.of());

  final String grant;
  final List<String> tableFunctions;
  final List<String> tableEngines;
  final List<String> databaseEngines;
  final List<String> dictionarySources;

  ExternalSource(
      String grant,
      List<String> tableFunctions,
      List<String> tableEngines,
      List<String> databaseEngines,
      List<String> dictionarySources) {
    this.grant = grant;
    this.tableFunctions = tableFunctions;
    this.tableEngines = tableEngines;
    this.databaseEngines = databaseEngines;
    this.dictionarySources = dictionarySources;
  }

  /** The name {@code --allow-sources} takes: {@code url}, {@code s3}, {@code postgresql}, ... */
  public String flagName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses a comma-separated list such as {@code url,s3}; empty or null is none.
   *
   * @throws IllegalArgumentException naming the unknown entry and the known ones
   */
  public static Set<ExternalSource> parseList(String list) {
    if (list == null || list.isBlank()) {
      return Set.of();
    }
    return Arrays.stream(list.split(","))
        .map(String::strip)
        .filter(s -> !s.isEmpty())
        .map(ExternalSource::of)
        .collect(Collectors.toUnmodifiableSet());
  }

  private static ExternalSource of(String name) {
    for (ExternalSource s : values()) {
      if (s.flagName().equals(name.toLowerCase(Locale.ROOT))) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "unknown source '"
            + name
            + "' in --allow-sources; known: "
            + Arrays.stream(values())
                .map(ExternalSource::flagName)
                .collect(Collectors.joining(", ")));
  }
}
