package dev.llmlat.ingest.imports;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.cli.Llmlat;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.JdbcClickHouse;
import dev.llmlat.store.StoreConfig;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.ExportFixtures;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Imports into the store are atomic and idempotent: a file imported twice, re-imported after an
 * interruption between its two tables, or forced, leaves exactly one copy; staging tables of killed
 * imports go at the next import. Through the CLI, on the real embedded engine.
 */
class StoreImportIdempotenceTest {
  static final int REQUESTS = 4;
  static final int KERNELS = 50;

  /**
   * One import of the fixture: its step span, its kernels, and one view row per kernel and request.
   */
  static final List<Long> ONE_COPY = List.of(1L, (long) KERNELS, (long) KERNELS * REQUESTS);

  @TempDir Path dir;
  Path data;
  Path export;

  record Run(int exit, String out, String err) {}

  @BeforeEach
  void fixture() throws Exception {
    data = dir.resolve("data");
    export = ExportFixtures.nsysDecodeStep(dir.resolve("decode.sqlite"), REQUESTS, KERNELS, 0x2000);
  }

  static Run llmlat(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit = Llmlat.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return new Run(exit, out.toString(), err.toString());
  }

  Run importToStore(Path file, String... more) {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "import", "nsys", file.toString(), "--to", "store", "--data-dir", data.toString()));
    args.addAll(List.of(more));
    Run r = llmlat(args.toArray(String[]::new));
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
    return r;
  }

  /** Rows in otel_traces, gpu_kernels and gpu_kernel_requests. */
  List<Long> counts() {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate())) {
      return Stream.of("otel_traces", "gpu_kernels", "gpu_kernel_requests")
          .map(t -> Long.parseLong(store.query("SELECT count() FROM " + t).single()))
          .toList();
    }
  }

  String sql(String query) {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate())) {
      return store.query(query).rows().toString();
    }
  }

  @Test
  void theSameFileImportedTwiceIsStoredOnce() throws Exception {
    Run first = importToStore(export);
    assertThat(first.out()).contains("imported " + export);
    assertThat(counts()).isEqualTo(ONE_COPY);

    Run again = importToStore(export);
    assertThat(again.out())
        .startsWith("already imported into ")
        .contains(
            " (1 spans, 50 kernels): nothing to do"
                + " (--force imports it again, replacing that copy)")
        .doesNotContain("imported " + export);
    // the same bytes under another name are the same import
    Path renamed = Files.copy(export, dir.resolve("renamed.sqlite"));
    Run copy = importToStore(renamed);
    assertThat(copy.out())
        .startsWith("already imported as " + export.toAbsolutePath() + " into ")
        .contains("nothing to do");
    assertThat(counts()).isEqualTo(ONE_COPY);
    assertThat(sql("SELECT Status, Spans, Kernels, Format, Options FROM llmlat_imports FINAL"))
        .isEqualTo("[[done, 1, 50, nsys, --nvtx-pattern auto --service llm-engine]]");
  }

  /**
   * Interrupted between its two INSERT ... SELECTs (the step span moved, its kernels not), an
   * import leaves a pending record; the re-run removes the partial copy and stores the whole file
   * once.
   */
  @Test
  void anImportInterruptedBetweenItsTwoTablesIsStoredOnceByTheRerun() throws Exception {
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      ImportedFile file =
          ImportedFile.of(export, "nsys", "--nvtx-pattern auto --service llm-engine");
      try (StoreImportTarget target = new StoreImportTarget(store, file, null)) {
        target.betweenTables(
            () -> {
              throw new IllegalStateException("killed between the tables");
            });
        GpuImporter.importFile(export, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), target);
        assertThatThrownBy(target::commit).hasMessage("killed between the tables");
      }
      assertThat(store.query("SELECT Status FROM llmlat_imports FINAL").single())
          .isEqualTo("pending");
    }
    assertThat(counts()).as("steps without kernels").isEqualTo(List.of(1L, 0L, 0L));

    Run rerun = importToStore(export);
    assertThat(rerun.out())
        .startsWith("an earlier import of this file into ")
        .contains(" was interrupted (")
        .contains("): its partial copy is removed as this import commits")
        .contains("imported " + export);
    assertThat(counts()).isEqualTo(ONE_COPY);
    assertThat(sql("SELECT Status FROM llmlat_imports FINAL")).isEqualTo("[[done]]");
    assertThat(
            sql(
                "SELECT DISTINCT ResourceAttributes['llmlat.import.id'] = ImportId FROM otel_traces, llmlat_imports"))
        .isEqualTo("[[1]]");
  }

  @Test
  void forceReplacesTheEarlierCopy() throws Exception {
    importToStore(export, "--service", "engine-a");
    Run otherOptions = importToStore(export, "--service", "engine-b");
    assertThat(otherOptions.out())
        .contains(" with --nvtx-pattern auto --service engine-a: nothing to do");
    assertThat(sql("SELECT DISTINCT ServiceName FROM gpu_kernels")).isEqualTo("[[engine-a]]");

    Run forced = importToStore(export, "--service", "engine-b", "--force");
    assertThat(forced.out())
        .startsWith("--force: the copy imported on ")
        .contains(" (1 spans, 50 kernels) is replaced as this import commits");
    assertThat(counts()).isEqualTo(ONE_COPY);
    assertThat(sql("SELECT DISTINCT ServiceName FROM gpu_kernels")).isEqualTo("[[engine-b]]");
    assertThat(sql("SELECT DISTINCT ServiceName FROM otel_traces")).isEqualTo("[[engine-b]]");
    assertThat(sql("SELECT Options FROM llmlat_imports FINAL"))
        .isEqualTo("[[--nvtx-pattern auto --service engine-b]]");

    // identical rows again: the removed copy's blocks must not make the insert look like a repeat
    importToStore(export, "--service", "engine-b", "--force");
    assertThat(counts()).isEqualTo(ONE_COPY);
  }

  /**
   * Staging tables of killed imports go at the next command that opens the store, whichever it is
   * (here {@code sql "SELECT 1"}), with one line on stderr; a live import's tables stay, and a
   * command finding nothing to drop says nothing.
   */
  @Test
  void stagingTablesOfKilledImportsAreDroppedByTheNextStoreOpeningCommandWithOneLine()
      throws Exception {
    StagingTables.Owner me = StagingTables.Owner.self();
    long dead = Integer.MAX_VALUE; // above any pid_max: no such process
    long twoDaysAgo = System.currentTimeMillis() - Duration.ofDays(2).toMillis();
    String live;
    String otherHostRecent;
    List<String> orphans;
    try (EmbeddedClickHouse store = EmbeddedClickHouse.open(data, EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      orphans =
          List.of(
              StagingTables.create(
                  store,
                  "otel_traces",
                  new StagingTables.Owner(me.host(), dead, me.started(), me.created())),
              StagingTables.create(
                  store,
                  "gpu_kernels",
                  new StagingTables.Owner(me.host(), dead, me.started(), me.created())),
              // this process's pid, but another process's start: the pid was reused
              StagingTables.create(
                  store,
                  "gpu_kernels",
                  new StagingTables.Owner(
                      me.host(), me.pid(), me.started() - 60_000, me.created())),
              StagingTables.create(
                  store, "otel_traces", new StagingTables.Owner("elsewhere", 7, 1, twoDaysAgo)),
              "otel_traces_import_" + dead + "_1"); // made before owners were recorded
      store.execute("CREATE TABLE " + orphans.get(4) + " AS otel_traces");
      live = StagingTables.create(store, "otel_traces", me);
      otherHostRecent =
          StagingTables.create(
              store, "gpu_kernels", new StagingTables.Owner("elsewhere", 7, 1, me.created()));
    }

    Run next = llmlat("sql", "SELECT 1", "--format", "tsv", "--data-dir", data.toString());
    assertThat(next.exit()).as(next.err()).isZero();
    assertThat(next.out()).isEqualTo("1\n1\n");
    assertThat(next.err().lines().toList())
        .singleElement()
        .satisfies(
            line ->
                assertThat(line)
                    .startsWith(
                        "llmlat sql: dropped 5 staging tables left by interrupted imports: ")
                    .contains(orphans));
    assertThat(
            sql(
                "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE '%\\\\_import\\\\_%' ORDER BY name"))
        .isEqualTo(List.of(List.of(otherHostRecent), List.of(live)).toString());

    Run import_ = importToStore(export);
    assertThat(import_.err()).doesNotContain("staging");
    assertThat(import_.out()).doesNotContain("staging");
    assertThat(counts()).isEqualTo(ONE_COPY);
  }

  /**
   * The same through the store process's HTTP interface and the official driver (how an import
   * reaches the store while `llmlat services` run): the ledger, the removal of a partial copy and
   * the staging tables' owners work there too.
   */
  @Test
  void throughTheStoreProcessAnInterruptedImportAndARepeatLeaveOneCopy() throws Exception {
    ImportedFile file = ImportedFile.of(export, "nsys", "--nvtx-pattern auto --service llm-engine");
    try (EmbeddedClickHouse embedded =
            EmbeddedClickHouse.openConfined(data, EngineLibrary.locate(), Confinement.STRICT);
        ClickHouseHttpServer http = ClickHouseHttpServer.start(embedded, 0);
        JdbcClickHouse server =
            JdbcClickHouse.open(
                StoreConfig.server("jdbc:clickhouse:" + http.url(), "default", ""))) {
      SchemaMigrator.bundled().migrate(server);
      try (StoreImportTarget target = new StoreImportTarget(server, file, null)) {
        target.betweenTables(
            () -> {
              throw new IllegalStateException("killed between the tables");
            });
        GpuImporter.importFile(export, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), target);
        assertThatThrownBy(target::commit).hasMessage("killed between the tables");
      }
      assertThat(counts(server)).isEqualTo(List.of(1L, 0L, 0L));
      // the re-run finds the import pending, then a forced one finds it done: each leaves one copy
      for (boolean done : new boolean[] {false, true}) {
        try (StoreImportTarget target = new StoreImportTarget(server, file, null)) {
          assertThat(target.earlier())
              .hasValueSatisfying(r -> assertThat(r.done()).isEqualTo(done));
          GpuImporter.importFile(
              export, ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), target);
          target.commit();
        }
        assertThat(counts(server)).isEqualTo(ONE_COPY);
      }
      assertThat(
              server
                  .query("SELECT count() FROM system.tables WHERE name LIKE '%\\_import\\_%'")
                  .single())
          .isEqualTo("0");
    }
  }

  private static List<Long> counts(ClickHouseStore store) {
    return Stream.of("otel_traces", "gpu_kernels", "gpu_kernel_requests")
        .map(t -> Long.parseLong(store.query("SELECT count() FROM " + t).single()))
        .toList();
  }
}
