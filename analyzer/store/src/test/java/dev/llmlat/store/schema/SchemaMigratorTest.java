package dev.llmlat.store.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.StoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SchemaMigratorTest {
  @TempDir Path dir;

  @Test
  void appliesEveryMigrationOnceAndRecordsIt() {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(dir, EngineLibrary.locate())) {
      SchemaMigrator migrator = SchemaMigrator.bundled();
      SchemaMigrator.Outcome first = migrator.migrate(store);
      assertThat(first.applied())
          .extracting(Migration::name)
          .containsExactly(
              "otel_traces",
              "gpu_kernels",
              "llm_request_attribution",
              "ingest_deduplication",
              "gpu_kernel_requests",
              "attribution_engine_adapter",
              "imports",
              "attribution_client_layer",
              "import_claims",
              "queue_breakdown",
              "attribution_decode_wait",
              "attribution_rank_wait",
              "attribution_upstream_connection",
              "attribution_tenant",
              "kept_traces",
              "attribution_parts",
              "gpu_collectives");
      SchemaMigrator.Outcome second = migrator.migrate(store);
      assertThat(second.applied()).isEmpty();
      assertThat(second.alreadyApplied()).isEqualTo(17);
      assertThat(
              store
                  .query("SELECT Version, Name FROM llmlat_migrations FINAL ORDER BY Version")
                  .rows())
          .containsExactly(
              List.of("1", "otel_traces"),
              List.of("2", "gpu_kernels"),
              List.of("3", "llm_request_attribution"),
              List.of("4", "ingest_deduplication"),
              List.of("5", "gpu_kernel_requests"),
              List.of("6", "attribution_engine_adapter"),
              List.of("7", "imports"),
              List.of("8", "attribution_client_layer"),
              List.of("9", "import_claims"),
              List.of("10", "queue_breakdown"),
              List.of("11", "attribution_decode_wait"),
              List.of("12", "attribution_rank_wait"),
              List.of("13", "attribution_upstream_connection"),
              List.of("14", "attribution_tenant"),
              List.of("15", "kept_traces"),
              List.of("16", "attribution_parts"),
              List.of("17", "gpu_collectives"));
      assertThat(
              store
                  .query(
                      "SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name")
                  .column("name"))
          .containsExactly(
              "gpu_collectives",
              "gpu_collectives_mv",
              "gpu_kernel_requests",
              "gpu_kernels",
              "llm_request_attribution",
              "llmlat_claims",
              "llmlat_imports",
              "llmlat_kept_traces",
              "llmlat_migrations",
              "otel_traces",
              "otel_traces_trace_id_ts",
              "otel_traces_trace_id_ts_mv");
    }
  }

  /**
   * Rows attributed before the engine adapter, the new components and the client layer were
   * recorded read as '' and 0.
   */
  @Test
  void upgradingKeepsAttributionRowsWithEmptyAdapterAndZeroNewComponents() {
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("upgrade-attribution"), EngineLibrary.locate())) {
      List<Migration> all = SchemaMigrator.bundled().migrations();
      new SchemaMigrator(all.subList(0, 5)).migrate(store);
      store.execute(
          "INSERT INTO llm_request_attribution (TraceId, TtftNs, QueueNs, AnalyzedAt) VALUES ('t1', 30, 30, 1)");
      assertThat(SchemaMigrator.bundled().migrate(store).applied())
          .extracting(Migration::name)
          .containsExactly(
              "attribution_engine_adapter",
              "imports",
              "attribution_client_layer",
              "import_claims",
              "queue_breakdown",
              "attribution_decode_wait",
              "attribution_rank_wait",
              "attribution_upstream_connection",
              "attribution_tenant",
              "kept_traces",
              "attribution_parts",
              "gpu_collectives");
      assertThat(
              store
                  .query(
                      "SELECT TraceId, TtftNs, QueueNs, EngineAdapter, EngineInNs, KvTransferNs, ClientToGatewayNs,"
                          + " GatewayToClientNs, ServerTtftNs, length(QueueCauseKind), QueueLimit, DecodeWaitNs, RankWaitNs,"
                          + " UpstreamPoolWaitNs, UpstreamPoolMax, UpstreamConnection FROM llm_request_attribution")
                  .rows())
          .containsExactly(
              List.of(
                  "t1", "30", "30", "", "0", "0", "0", "0", "0", "0", "", "0", "0", "0", "-1", ""));
    }
  }

  /** A store made before kernel rows stopped carrying their step's trace ids keeps its rows. */
  @Test
  void upgradingDropsTheKernelTraceIdsColumnAndKeepsTheRows() {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(dir, EngineLibrary.locate())) {
      List<Migration> all = SchemaMigrator.bundled().migrations();
      new SchemaMigrator(all.subList(0, 4)).migrate(store);
      store.execute(
          "INSERT INTO gpu_kernels (Start, DurationNs, Kind, Name, StepSpanId, TraceIds)"
              + " VALUES (1000, 5, 'kernel', 'k', 'aaaabbbbccccdddd', ['0123456789abcdef0123456789abcdef'])");
      store.execute(
          "INSERT INTO otel_traces (Timestamp, TraceId, SpanId, SpanName, ResourceAttributes, `Links.TraceId`,"
              + " `Links.SpanId`, `Links.TraceState`, `Links.Attributes`) VALUES (1000, '0123456789abcdef0123456789abcdef',"
              + " 'aaaabbbbccccdddd', 'step', map('llmlat.layer', 'gpu'), ['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210'],"
              + " ['', ''], ['', ''], [map(), map()])");
      assertThat(SchemaMigrator.bundled().migrate(store).applied())
          .extracting(Migration::name)
          .containsExactly(
              "gpu_kernel_requests",
              "attribution_engine_adapter",
              "imports",
              "attribution_client_layer",
              "import_claims",
              "queue_breakdown",
              "attribution_decode_wait",
              "attribution_rank_wait",
              "attribution_upstream_connection",
              "attribution_tenant",
              "kept_traces",
              "attribution_parts",
              "gpu_collectives");
      assertThat(
              store
                  .query(
                      "SELECT count() FROM system.columns WHERE table = 'gpu_kernels' AND name = 'TraceIds'"
                          + " AND database = currentDatabase()")
                  .single())
          .isEqualTo("0");
      assertThat(
              store
                  .query(
                      "SELECT Name, RequestTraceId FROM gpu_kernel_requests ORDER BY RequestTraceId")
                  .rows())
          .containsExactly(
              List.of("k", "0123456789abcdef0123456789abcdef"),
              List.of("k", "fedcba9876543210fedcba9876543210"));
      // rows stored before imports were tracked name no import
      assertThat(store.query("SELECT Name, ImportId FROM gpu_kernels").rows())
          .containsExactly(List.of("k", ""));
    }
  }

  @Test
  void otelTracesHasTheCollectorExportersColumns() {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(dir, EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      List<String> columns = new ArrayList<>();
      store
          .query(
              "SELECT name, type FROM system.columns WHERE table = 'otel_traces' AND database = currentDatabase()"
                  + " ORDER BY position")
          .rows()
          .forEach(r -> columns.add(r.get(0) + " " + r.get(1)));
      // The exporter's DDL (opentelemetry-collector-contrib exporter/clickhouseexporter
      // traces_table.sql)
      assertThat(columns)
          .containsExactly(
              "Timestamp DateTime64(9)",
              "TraceId String",
              "SpanId String",
              "ParentSpanId String",
              "TraceState String",
              "SpanName LowCardinality(String)",
              "SpanKind LowCardinality(String)",
              "ServiceName LowCardinality(String)",
              "ResourceAttributes Map(LowCardinality(String), String)",
              "ScopeName String",
              "ScopeVersion String",
              "SpanAttributes Map(LowCardinality(String), String)",
              "Duration UInt64",
              "StatusCode LowCardinality(String)",
              "StatusMessage String",
              "Events.Timestamp Array(DateTime64(9))",
              "Events.Name Array(LowCardinality(String))",
              "Events.Attributes Array(Map(LowCardinality(String), String))",
              "Links.TraceId Array(String)",
              "Links.SpanId Array(String)",
              "Links.TraceState Array(String)",
              "Links.Attributes Array(Map(LowCardinality(String), String))",
              "ResourceAttributeItems Array(String)",
              "SpanAttributeItems Array(String)");
      assertThat(
              store
                  .query(
                      "SELECT sorting_key, partition_key FROM system.tables WHERE name = 'otel_traces'"
                          + " AND database = currentDatabase()")
                  .rows()
                  .get(0))
          .containsExactly(
              "ServiceName, SpanName, toDateTime(Timestamp), Timestamp", "toDate(Timestamp)");
    }
  }

  @Test
  void refusesAMigrationEditedAfterItWasApplied() {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(dir, EngineLibrary.locate())) {
      new SchemaMigrator(
              List.of(
                  Migration.of(
                      "0001_t.sql", "CREATE TABLE IF NOT EXISTS t (a UInt8) ENGINE = Memory;")))
          .migrate(store);
      SchemaMigrator edited =
          new SchemaMigrator(
              List.of(
                  Migration.of(
                      "0001_t.sql", "CREATE TABLE IF NOT EXISTS t (a UInt16) ENGINE = Memory;")));
      assertThatThrownBy(() -> edited.migrate(store))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("schema migration 1_t changed after it was applied");
    }
  }

  @Test
  void splitsStatementsAtLineEndSemicolonsAndSkipsComments() {
    Migration m =
        Migration.of(
            "0007_x.sql",
            "-- header\nCREATE TABLE a (s String DEFAULT 'x;y') ENGINE = Memory;\n\n-- only a comment\n"
                + "CREATE VIEW v AS SELECT 1;\n");
    assertThat(m.version()).isEqualTo(7);
    assertThat(m.statements())
        .containsExactly(
            "-- header\nCREATE TABLE a (s String DEFAULT 'x;y') ENGINE = Memory",
            "-- only a comment\nCREATE VIEW v AS SELECT 1");
  }

  @Test
  void theIndexListsEveryMigrationFileInTheSchemasFolder() throws IOException {
    Path root = Path.of(System.getProperty("user.dir")).toAbsolutePath();
    while (!Files.isDirectory(root.resolve("schemas/clickhouse"))) {
      root = root.getParent(); // the module's directory, up to the repository's
    }
    Path folder = root.resolve("schemas/clickhouse");
    List<String> files;
    try (Stream<Path> s = Files.list(folder)) {
      files =
          s.map(p -> p.getFileName().toString())
              .filter(n -> n.matches("\\d{4}_.*\\.sql"))
              .sorted()
              .toList();
    }
    assertThat(SchemaMigrator.bundled().migrations())
        .extracting(m -> String.format("%04d_%s.sql", m.version(), m.name()))
        .containsExactlyElementsOf(files);
  }
}
