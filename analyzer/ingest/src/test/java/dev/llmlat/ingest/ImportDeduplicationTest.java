package dev.llmlat.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.imports.ImportRecord;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.ingest.imports.ImportClaim;
import dev.llmlat.ingest.imports.ImportClaims;
import dev.llmlat.ingest.imports.StoreImportLedger;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which imports' records the ingester stores, against the real claims table and ledger. */
class ImportDeduplicationTest {
  static final String RUN_A = "kafka:run-a";
  static final String RUN_B = "kafka:run-b";

  @TempDir static Path dir;
  static EmbeddedClickHouse store;
  static ImportClaims claims;
  static StoreImportLedger ledger;

  ImportDeduplication deduplication;
  ImportedFile file;

  @BeforeAll
  static void openStore() {
    store = EmbeddedClickHouse.open(dir.resolve("store"), EngineLibrary.locate());
    SchemaMigrator.bundled().migrate(store);
    claims = new ImportClaims(store);
    ledger = new StoreImportLedger(store);
  }

  @AfterAll
  static void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  @BeforeEach
  void freshFile() {
    deduplication =
        new ImportDeduplication(
            claims, ledger, new StoreRetry(store.description(), new IngestMetrics(), () -> true));
    String id = UUID.randomUUID().toString().replace("-", "");
    file = new ImportedFile(id, "/data/" + id + ".nsys-rep", "nsys", "");
  }

  static Instant now() {
    return Instant.now().truncatedTo(ChronoUnit.MICROS);
  }

  @Test
  void theFirstRunToPublishAnUnclaimedFileClaimsItAndAnotherRunIsRefused() {
    assertThat(deduplication.stores(file, RUN_A)).isTrue();
    ImportClaim claim = claims.latest(file.id()).orElseThrow();
    assertThat(List.of(claim.epoch(), claim.claimant(), claim.path()))
        .containsExactly(1L, RUN_A, ImportClaim.Path.KAFKA);

    assertThat(deduplication.stores(file, RUN_B)).isFalse();
    assertThat(claims.latest(file.id()).orElseThrow().claimant()).isEqualTo(RUN_A);
  }

  @Test
  void aFileClaimedByAnImportStraightIntoTheStoreIsNotStored() {
    claims.claim(file.id(), 1, "store:" + UUID.randomUUID(), ImportClaim.Path.STORE, "");
    assertThat(deduplication.stores(file, RUN_A)).isFalse();
    assertThat(claims.latest(file.id()).orElseThrow().epoch()).isEqualTo(1);
  }

  @Test
  void aReleasedClaimIsTakenOverAtTheNextEpoch() {
    String storeRun = "store:" + UUID.randomUUID();
    claims.claim(file.id(), 1, storeRun, ImportClaim.Path.STORE, "");
    claims.claim(file.id(), 2, storeRun, ImportClaim.Path.RELEASED, "");
    assertThat(deduplication.stores(file, RUN_A)).isTrue();
    ImportClaim claim = claims.latest(file.id()).orElseThrow();
    assertThat(List.of(claim.epoch(), claim.claimant())).containsExactly(3L, RUN_A);
  }

  @Test
  void aFileTheLedgerHoldsWithoutAClaimIsNotStoredAndNotClaimed() {
    ledger.write(new ImportRecord(file, ImportRecord.Status.DONE, 12, 3, now()));
    assertThat(deduplication.stores(file, RUN_A)).isFalse();
    assertThat(claims.latest(file.id())).isEmpty();

    ImportedFile pending =
        new ImportedFile(
            UUID.randomUUID().toString().replace("-", ""), "/data/p.json", "kineto", "");
    ledger.write(new ImportRecord(pending, ImportRecord.Status.PENDING, 0, 0, now()));
    assertThat(deduplication.stores(pending, RUN_A)).isFalse();
    assertThat(claims.latest(pending.id())).isEmpty();
  }

  @Test
  void aDecisionHoldsForTheBatchAndIsReadAfreshForTheNext() {
    assertThat(deduplication.stores(file, RUN_A)).isTrue();
    // a forced import into the store takes the file over while this batch is being formed
    claims.claim(file.id(), 2, "store:" + UUID.randomUUID(), ImportClaim.Path.STORE, "");
    assertThat(deduplication.stores(file, RUN_A)).isTrue();
    deduplication.batchDone();
    assertThat(deduplication.stores(file, RUN_A)).isFalse();
  }

  @Test
  void recordsAStoredImportInTheLedgerAsIngested() {
    assertThat(deduplication.stores(file, RUN_A)).isTrue();
    deduplication.recordStored(List.of(file));
    ImportRecord record = ledger.find(file.id()).orElseThrow();
    assertThat(record.status()).isEqualTo(ImportRecord.Status.INGESTED);
    assertThat(record.file()).isEqualTo(file);

    // once ingested, the ledger's record is what stands: a claim released since does not let a
    // second run store it
    claims.claim(file.id(), 2, RUN_A, ImportClaim.Path.RELEASED, "");
    deduplication.batchDone();
    assertThat(deduplication.stores(file, RUN_B)).isFalse();
  }
}
