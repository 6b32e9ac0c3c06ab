package dev.llmlat.ingest.imports;

import static dev.llmlat.ingest.imports.GateHooks.claimed;
import static dev.llmlat.ingest.imports.GateHooks.claiming;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.imports.ImportRecord;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.imports.KafkaImportTarget;
import dev.llmlat.ingest.IngestMetrics;
import dev.llmlat.ingest.IngesterAccess;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.ExportFixtures;
import dev.llmlat.testing.KafkaBrokerExtension;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * One file, one copy, whatever the interleaving of an import to Kafka, the ingester storing it and
 * an import of the same file straight into the store: each test orders the parties at their hooks
 * (the claim, the Kafka commit, the ingester's insert, the store import's commit) and checks that
 * the file's rows are in the store once and that the parties say which of them stored it. A real
 * Kafka broker, the real ingester and engine; the parties do what {@code llmlat import} does.
 */
class ImportClaimInterleavingsTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();
  @TempDir static Path dir;

  static final Gates gates = new Gates();
  static final ImportHooks hooks = new GateHooks(gates);
  static final AtomicInteger exports = new AtomicInteger();
  static final AtomicLong published =
      new AtomicLong(); // records every import to Kafka here published
  static EmbeddedClickHouse store;
  static String topic;
  static SpanIngester ingester;

  static final String IMPORTED = "imported";
  static final String THROUGH_KAFKA = "already imported through Kafka";
  static final long SPANS = 1; // what one export below stores: its step span in otel_traces
  static final long KERNELS =
      50; // and its kernels in gpu_kernels (Kafka carries them as 50 more spans)

  Totals before;

  @BeforeAll
  static void start() throws Exception {
    store = EmbeddedClickHouse.open(dir.resolve("store"), EngineLibrary.locate());
    SchemaMigrator.bundled().migrate(store);
    topic = "spans_" + UUID.randomUUID().toString().substring(0, 8);
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 2);
    }
    ingester =
        new SpanIngester(
            IngesterConfig.builder(broker.bootstrapServers())
                .topic(topic)
                .groupId("g-" + topic)
                .linger(Duration.ofMillis(100))
                .reportInterval(Duration.ZERO)
                .build(),
            store);
    IngesterAccess.claims(ingester, new ImportClaims(store, hooks));
    IngesterAccess.beforeInsert(
        ingester, ids -> ids.forEach(id -> gates.pass(GateHooks.ingesterInsert(id))));
    ingester.start();
  }

  @AfterAll
  static void stop() {
    if (ingester != null) {
      ingester.close();
    }
    if (store != null) {
      store.close();
    }
  }

  @BeforeEach
  void remember() {
    before = Totals.now();
  }

  @AfterEach
  void openEveryGate() {
    gates.clear();
  }

  @Test
  void kafkaImportStoredByTheIngesterThenAStoreImport() throws Exception {
    Export e = export();
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    Await.until(
        () -> Long.parseLong(count("otel_traces", e)) == SPANS, "the ingester stored the file");
    assertThat(storeImport(e, false)).isEqualTo(THROUGH_KAFKA);
    assertStoredOnceBy(e, ImportClaim.Path.KAFKA);
  }

  @Test
  void storeImportClaimsFirstAndCommitsAfterTheKafkaImport() throws Exception {
    Export e = export();
    Gates.Gate commit = gates.arm(GateHooks.storeCommit(e.id()));
    CompletableFuture<String> store = async(() -> storeImport(e, false));
    commit.awaitArrival(); // claimed as it opened, rows staged
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    awaitSkipped();
    commit.open();
    assertThat(store.get(60, TimeUnit.SECONDS)).isEqualTo(IMPORTED);
    assertStoredOnceBy(e, ImportClaim.Path.STORE);
  }

  @Test
  void storeImportOpensWhileTheIngesterHoldsItsFirstBatch() throws Exception {
    Export e = export();
    Gates.Gate insert = gates.arm(GateHooks.ingesterInsert(e.id()));
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    insert.awaitArrival(); // claimed, rows not in yet
    assertThat(storeImport(e, false)).isEqualTo(THROUGH_KAFKA);
    insert.open();
    assertStoredOnceBy(e, ImportClaim.Path.KAFKA);
  }

  @Test
  void bothFindNoClaimAndTheIngesterInsertsItsClaimFirst() throws Exception {
    Export e = export();
    Gates.Gate kafkaClaiming = gates.arm(claiming("kafka", e.id()));
    Gates.Gate storeClaiming = gates.arm(claiming("store", e.id()));
    Gates.Gate kafkaClaimed = gates.watch(claimed("kafka", e.id()));
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    kafkaClaiming.awaitArrival();
    CompletableFuture<String> store = async(() -> storeImport(e, false));
    storeClaiming.awaitArrival(); // both have read: no claim
    kafkaClaiming.open();
    kafkaClaimed.awaitArrival();
    storeClaiming.open();
    assertThat(store.get(60, TimeUnit.SECONDS)).isEqualTo(THROUGH_KAFKA);
    assertStoredOnceBy(e, ImportClaim.Path.KAFKA);
    assertThat(claimPaths(e))
        .as("the later claim of the epoch was dropped as a repeat")
        .containsExactly("1 kafka");
  }

  @Test
  void bothFindNoClaimAndTheStoreImportInsertsItsClaimFirst() throws Exception {
    Export e = export();
    Gates.Gate kafkaClaiming = gates.arm(claiming("kafka", e.id()));
    Gates.Gate storeClaiming = gates.arm(claiming("store", e.id()));
    Gates.Gate storeClaimed = gates.watch(claimed("store", e.id()));
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    kafkaClaiming.awaitArrival();
    CompletableFuture<String> store = async(() -> storeImport(e, false));
    storeClaiming.awaitArrival();
    storeClaiming.open();
    storeClaimed.awaitArrival();
    kafkaClaiming.open();
    assertThat(store.get(60, TimeUnit.SECONDS)).isEqualTo(IMPORTED);
    awaitSkipped();
    assertStoredOnceBy(e, ImportClaim.Path.STORE);
    assertThat(claimPaths(e))
        .as("the later claim of the epoch was dropped as a repeat")
        .containsExactly("1 store");
  }

  @Test
  void storeImportRunsWhileTheKafkaImportWaitsToCommit() throws Exception {
    Export e = export();
    Gates.Gate kafkaCommit = gates.arm(GateHooks.kafkaCommit(e.id()));
    CompletableFuture<String> kafka = async(() -> kafkaImport(e));
    kafkaCommit.awaitArrival();
    assertThat(storeImport(e, false)).isEqualTo(IMPORTED);
    kafkaCommit.open();
    assertThat(kafka.get(60, TimeUnit.SECONDS))
        .isEqualTo(IMPORTED); // published; the ingester drops it
    awaitSkipped();
    assertStoredOnceBy(e, ImportClaim.Path.STORE);
  }

  @Test
  void storeImportThatFailsReleasesItsClaimForTheIngester() throws Exception {
    Export e = export();
    try (StoreImportTarget failing = new StoreImportTarget(store, e.file(), null, hooks)) {
      GpuImporter.importFile(e.path(), ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), failing);
    } // closed without a commit, as a failed import is
    assertThat(new ImportClaims(store).latest(e.id()).orElseThrow().released()).isTrue();
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    assertStoredOnceBy(e, ImportClaim.Path.KAFKA);
    assertThat(claimPaths(e)).containsExactly("1 store", "2 released", "3 kafka");
  }

  @Test
  void forcedStoreImportReplacesTheIngestersCopy() throws Exception {
    Export e = export();
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    Await.until(
        () -> Long.parseLong(count("gpu_kernels", e)) == KERNELS, "the ingester stored the file");
    awaitIngested();
    assertThat(storeImport(e, true)).isEqualTo(IMPORTED);
    assertStoredOnceBy(e, ImportClaim.Path.STORE, before, 0);
    assertThat(claimPaths(e)).containsExactly("1 kafka", "2 store");
  }

  /**
   * A store import killed after it claimed: the ingester leaves the file to it, and its re-run
   * takes the claim over.
   */
  @Test
  void storeImportKilledAfterClaimingIsCompletedByItsRerun() throws Exception {
    Export e = export();
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor();
    StagingTables.Owner dead =
        new StagingTables.Owner(
            StagingTables.Owner.self().host(), gone.pid(), -1, System.currentTimeMillis());
    new ImportClaims(store)
        .claim(e.id(), 1, "store:killed", ImportClaim.Path.STORE, dead.comment());
    assertThat(kafkaImport(e)).isEqualTo(IMPORTED);
    awaitSkipped();
    assertThat(storeImport(e, false)).isEqualTo(IMPORTED);
    assertStoredOnceBy(e, ImportClaim.Path.STORE);
    assertThat(claimPaths(e)).containsExactly("1 store", "2 store");
  }

  /** Real concurrency: an import to Kafka, then one into the store started 0.5 to 2.5 s later. */
  @Test
  void storeImportsStartedWhileKafkaImportsRunStoreEachFileOnce() throws Exception {
    List<String> winners = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Totals round = Totals.now();
      Export e = export();
      long offsetMs = 500 + i * 2000L / 9;
      CompletableFuture<String> kafka = async(() -> kafkaImport(e));
      Thread.sleep(offsetMs);
      CompletableFuture<String> store = async(() -> storeImport(e, false));
      assertThat(kafka.get(60, TimeUnit.SECONDS)).isEqualTo(IMPORTED);
      String said = store.get(60, TimeUnit.SECONDS);
      awaitIngested();
      ImportClaim.Path by =
          new ImportClaims(ImportClaimInterleavingsTest.store).latest(e.id()).orElseThrow().path();
      assertThat(said)
          .as("store import started %d ms after the Kafka one", offsetMs)
          .isEqualTo(by == ImportClaim.Path.STORE ? IMPORTED : THROUGH_KAFKA);
      assertStoredOnceBy(e, by, round, by == ImportClaim.Path.STORE ? SPANS + KERNELS : 0);
      winners.add(offsetMs + " ms: " + by.text());
    }
    System.out.println("stored by: " + winners);
  }

  record Export(Path path, ImportedFile file) {
    String id() {
      return file.id();
    }
  }

  /** A small export of its own (its own bytes, so its own import id). */
  static Export export() throws Exception {
    int n = exports.incrementAndGet();
    Path path =
        ExportFixtures.nsysDecodeStep(
            dir.resolve("export-" + n + ".sqlite"), 4, (int) KERNELS, 0x10000 * n);
    return new Export(path, ImportedFile.of(path, "nsys", ""));
  }

  /** {@code llmlat import nsys FILE --kafka …}: what it prints first. */
  static String kafkaImport(Export e) throws Exception {
    Optional<ImportRecord> inStore = new StoreImportLedger(store).find(e.id());
    if (inStore.isPresent()) {
      return inStore.get().done()
          ? "already imported into the store"
          : "refused: pending in the store";
    }
    try (KafkaImportTarget target =
        new KafkaImportTarget(
            broker.bootstrapServers(), topic, KafkaClientProperties.none(), e.file())) {
      target.beforeCommit(hooks::kafkaCommitting);
      if (target.earlier().filter(ImportRecord::done).isPresent()) {
        return "already imported into Kafka";
      }
      GpuImporter.importFile(e.path(), ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), target);
      target.commit();
      published.addAndGet(target.records());
      return IMPORTED;
    }
  }

  /**
   * {@code llmlat import nsys FILE --to store [--force]}: what it prints first (an error's message
   * for a failure).
   */
  static String storeImport(Export e, boolean force) throws Exception {
    try (StoreImportTarget target = new StoreImportTarget(store, e.file(), null, hooks)) {
      Optional<ImportRecord> earlier = target.earlier();
      if (earlier.isPresent() && earlier.get().done() && !force) {
        return earlier.get().ingested() ? THROUGH_KAFKA : "already imported";
      }
      GpuImporter.importFile(e.path(), ExportFormat.NSYS_SQLITE, ImportOptions.defaults(), target);
      target.commit();
      return IMPORTED;
    } catch (IllegalStateException failed) {
      return "failed: " + failed.getMessage();
    }
  }

  static CompletableFuture<String> async(Callable<String> party) {
    CompletableFuture<String> said = new CompletableFuture<>();
    Thread.ofPlatform()
        .daemon()
        .start(
            () -> {
              try {
                said.complete(party.call());
              } catch (Throwable t) {
                said.completeExceptionally(t);
              }
            });
    return said;
  }

  /** Until the ingester has read every record published and written what it keeps of them. */
  static void awaitIngested() throws InterruptedException {
    Await.until(
        () -> {
          IngestMetrics.Snapshot s = ingester.metrics().snapshot();
          return s.records() >= published.get() && s.pendingSpans() == 0;
        },
        "the ingester caught up",
        60);
    Thread.sleep(300); // a batch just taken from pending is being inserted
    assertThat(ingester.failure()).isNull();
  }

  void awaitSkipped() throws InterruptedException {
    Await.until(
        () ->
            ingester.metrics().snapshot().importSpansSkipped() - before.skipped()
                == SPANS + KERNELS,
        "the ingester dropped the file's records",
        60);
  }

  void assertStoredOnceBy(Export e, ImportClaim.Path by) throws InterruptedException {
    assertStoredOnceBy(e, by, before, by == ImportClaim.Path.STORE ? SPANS + KERNELS : 0);
  }

  /**
   * The file's rows are in the store once, and the ledger and the ingester agree on who stored
   * them.
   */
  static void assertStoredOnceBy(Export e, ImportClaim.Path by, Totals since, long skipped)
      throws InterruptedException {
    awaitIngested();
    Totals now = Totals.now();
    assertThat(
            store
                .query(
                    "SELECT TraceId, SpanId, count() AS n FROM otel_traces GROUP BY TraceId, SpanId HAVING n > 1")
                .rows())
        .as("spans stored more than once")
        .isEmpty();
    // every export has the same kernels (only its requests differ): they are told apart by their
    // import
    assertThat(
            store
                .query(
                    "SELECT Device, Stream, Start, CorrelationId, count() AS n FROM gpu_kernels WHERE ImportId = {id:String}"
                        + " GROUP BY Device, Stream, Start, CorrelationId HAVING n > 1",
                    Map.of("id", e.id()))
                .rows())
        .as("kernels stored more than once")
        .isEmpty();
    assertThat(List.of(count("otel_traces", e), count("gpu_kernels", e)))
        .isEqualTo(List.of(SPANS + "", KERNELS + ""));
    assertThat(List.of(now.spans() - since.spans(), now.kernels() - since.kernels()))
        .as("rows added to the store (tagged or not)")
        .isEqualTo(List.of(SPANS, KERNELS));
    assertThat(new ImportClaims(store).latest(e.id()).orElseThrow().path()).isEqualTo(by);
    assertThat(new StoreImportLedger(store).find(e.id()).orElseThrow().status())
        .isEqualTo(
            by == ImportClaim.Path.STORE ? ImportRecord.Status.DONE : ImportRecord.Status.INGESTED);
    assertThat(now.skipped() - since.skipped()).as("spans the ingester dropped").isEqualTo(skipped);
  }

  static String count(String table, Export e) {
    String tagged =
        table.equals("gpu_kernels")
            ? "ImportId"
            : "ResourceAttributes['" + StoreImportTarget.IMPORT_ID_ATTRIBUTE + "']";
    return store
        .query(
            "SELECT count() FROM " + table + " WHERE " + tagged + " = {id:String}",
            Map.of("id", e.id()))
        .single();
  }

  static List<String> claimPaths(Export e) {
    return store
        .query(
            "SELECT Epoch, Path FROM "
                + ImportClaims.TABLE
                + " WHERE ImportId = {id:String} ORDER BY Epoch",
            Map.of("id", e.id()))
        .rows()
        .stream()
        .map(r -> r.get(0) + " " + r.get(1))
        .toList();
  }

  record Totals(long spans, long kernels, long skipped, Instant at) {
    static Totals now() {
      return new Totals(
          Long.parseLong(store.query("SELECT count() FROM otel_traces").single()),
          Long.parseLong(store.query("SELECT count() FROM gpu_kernels").single()),
          ingester.metrics().snapshot().importSpansSkipped(),
          Instant.now());
    }
  }
}
