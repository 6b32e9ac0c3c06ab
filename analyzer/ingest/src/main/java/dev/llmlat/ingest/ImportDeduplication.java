package dev.llmlat.ingest;

import dev.llmlat.imports.ImportRecord;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.ingest.imports.ImportClaim;
import dev.llmlat.ingest.imports.ImportClaims;
import dev.llmlat.ingest.imports.StoreImportLedger;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether the records an import published to Kafka are stored, so that one file is stored
 * once whichever way it came: only while the file's claim ({@link ImportClaims}) is that import
 * run's. The first record of a file nobody claimed claims it for the run; a file claimed by an
 * import straight into the store, or by another run, is not stored, nor is one the ledger ({@link
 * StoreImportLedger}) holds without a claim (imported before claims existed). Decisions hold for
 * one batch ({@link #batchDone()}); a stored import is recorded in the ledger as ingested.
 */
final class ImportDeduplication {
  private static final Logger LOG = LoggerFactory.getLogger(ImportDeduplication.class);

  private final ImportClaims claims;
  private final StoreImportLedger ledger;
  private final StoreRetry retry;

  /** Whether to store each import run's records, decided once a batch. */
  private final Map<String, Boolean> decisions = new HashMap<>();

  /** Imports found in the ledger as ingested, or recorded so. */
  private final Set<String> recorded = new HashSet<>();

  private final Set<String> notStoredSaid = new HashSet<>();

  ImportDeduplication(ImportClaims claims, StoreImportLedger ledger, StoreRetry retry) {
    this.claims = claims;
    this.ledger = ledger;
    this.retry = retry;
  }

  /**
   * Whether to store the records of import {@code file} that {@code claimant} (its run) published:
   * while the claim in force is the run's; claimed by nobody yet, the run claims it now.
   */
  boolean stores(ImportedFile file, String claimant) {
    String key = file.id() + " " + claimant;
    Boolean decided = decisions.get(key);
    if (decided != null) {
      return decided;
    }
    ImportClaim claim =
        retry.call("reading the import claims", () -> claims.latest(file.id())).orElse(null);
    Optional<ImportRecord> known = Optional.empty();
    if (claim == null || claim.released()) {
      known = retry.call("reading the import ledger", () -> ledger.find(file.id()));
      if (known.isEmpty()) {
        long epoch = claim == null ? 1 : claim.epoch() + 1;
        claim =
            retry.call(
                "claiming import " + file.id(),
                () -> claims.claim(file.id(), epoch, claimant, ImportClaim.Path.KAFKA, ""));
      }
    }
    boolean stores = claim != null && claim.heldBy(claimant);
    if (!stores && notStoredSaid.add(key)) {
      sayNotStored(file, claim, known);
    }
    decisions.put(key, stores);
    return stores;
  }

  /** Records {@code imports} in the store's ledger as ingested, before their first rows go in. */
  void recordStored(Collection<ImportedFile> imports) {
    for (ImportedFile f : imports) {
      if (recorded.add(f.id())
          && !retry
              .call("reading the import ledger", () -> ledger.find(f.id()))
              .map(ImportRecord::ingested)
              .orElse(false)) {
        ImportRecord r =
            new ImportRecord(
                f,
                ImportRecord.Status.INGESTED,
                0,
                0,
                Instant.now().truncatedTo(ChronoUnit.MICROS));
        retry.run("recording import " + f.id() + " in the ledger", () -> ledger.write(r));
        LOG.info(
            "storing import {} ({}, {}) from Kafka; recorded in the store's import ledger",
            f.id(),
            f.file(),
            f.format());
      }
    }
  }

  /**
   * The batch went in: the next one reads the claims afresh (a forced import into the store may
   * replace ours).
   */
  void batchDone() {
    decisions.clear();
  }

  private static void sayNotStored(
      ImportedFile file, ImportClaim claim, Optional<ImportRecord> known) {
    if (claim != null && claim.path() == ImportClaim.Path.STORE) {
      LOG.info(
          "import {} ({}) was claimed on {} by an import straight into the store, which stores it (or, interrupted, its re-run"
              + " does): its records from Kafka are not stored",
          file.id(),
          file.file(),
          claim.at());
    } else if (claim != null && claim.path() == ImportClaim.Path.KAFKA) {
      LOG.info(
          "import {} ({}) was stored from an earlier import of it to Kafka (claimed on {}): these records are not stored again",
          file.id(),
          file.file(),
          claim.at());
    } else if (known.isPresent() && known.get().done()) {
      LOG.info(
          "import {} ({}) is in the store already, since {}: its records from Kafka are not stored again",
          file.id(),
          file.file(),
          known.get().at());
    } else if (known.isPresent()) {
      LOG.warn(
          "import {} ({}) is pending in the store since {}: an import of it straight into the store was interrupted (its re-run"
              + " completes it): its records from Kafka are not stored",
          file.id(),
          file.file(),
          known.get().at());
    }
  }
}
