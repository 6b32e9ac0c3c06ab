package dev.llmlat.ingest.imports;

import dev.llmlat.imports.ImportHeaders;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Who writes an imported file's rows, whichever way the file comes (straight into the store, or to
 * Kafka and then by the ingester) and however the parties interleave: table {@code llmlat_claims}
 * (migration 0009).
 *
 * <p>ClickHouse has no transactions; what it has is insert deduplication, decided atomically with
 * the insert: of inserts carrying one token (within the table's window) the first is stored and the
 * others are dropped. A claim is one row per (file, epoch) inserted with the token {@code
 * llmlat.claim.<id>.<epoch>}, so however claimants race for an epoch the table holds one row of it,
 * and every claimant reading it back (waiting until it is visible: a replica may lag) agrees on the
 * winner. A higher epoch takes the file over; the latest epoch's row is the claim in force.
 *
 * <ul>
 *   <li>A store import ({@link StoreImportTarget}, claimant {@code store:<run>}) claims as it opens
 *       when nothing is there to replace (a new file, or one whose claim was released or abandoned
 *       by a dead process), so its loss is known before it stages anything and it reports the file
 *       as imported through Kafka. Replacing something (--force, or completing an interrupted run),
 *       it takes the next epoch over at its first write, against the claim it saw at open: a claim
 *       taken by another party meanwhile makes it fail before it writes.
 *   <li>The ingester ({@code SpanIngester}) claims for an import to Kafka at the first record of a
 *       file without a claim, as {@code kafka:<run>} of that import ({@link ImportHeaders#RUN}):
 *       every ingester of the group holds it together, and a batch replayed after a crash still
 *       holds it.
 * </ul>
 *
 * <p>Only the holder writes: a store import moves its staged rows only if its claim is still the
 * latest at commit; the ingester stores an import's records only while the latest claim is its
 * run's (read once per batch) and drops the others'. No party ever deletes another's rows on the
 * strength of a race, so there is nothing to reconcile after one.
 *
 * <p>Crashes: a claim never expires by itself. A store import that fails before its commit wrote
 * anything releases its claim (a {@code released} row of the next epoch); one that fails later
 * keeps it without an owner, and one killed leaves it (and perhaps a pending ledger record): its
 * re-run takes it over once the run is known to be over (no owner, or the owner's process gone),
 * removing the partial copy first as before; meanwhile the ingester does not store the file. An
 * ingester's crash changes nothing (the claim is the Kafka run's). A Kafka import that dies
 * committed nothing, so nothing claims for it. Not guarded: a --force import into the store while
 * an ingester is still storing the same file (a batch in flight may land after the forced import
 * removed the old copy).
 *
 * <p>The ledger ({@link StoreImportLedger}) still records what happened (pending, done, ingested),
 * for messages and for files imported before claims existed; the claim decides who writes.
 */
public final class ImportClaims {
  static final String TABLE = "llmlat_claims";
  private static final List<String> COLUMNS =
      List.of("ImportId", "Epoch", "Claimant", "Path", "Owner", "ClaimedAt");
  private static final Duration VISIBLE_WITHIN = Duration.ofSeconds(30);

  private final ClickHouseStore store;
  private final ImportHooks hooks;

  public ImportClaims(ClickHouseStore store) {
    this(store, ImportHooks.NONE);
  }

  ImportClaims(ClickHouseStore store, ImportHooks hooks) {
    this.store = store;
    this.hooks = hooks;
  }

  /** A new claimant id for one run of an import into the store. */
  static String storeClaimant() {
    return "store:" + UUID.randomUUID();
  }

  /** The claim in force for import {@code id}: its latest epoch's row. */
  public Optional<ImportClaim> latest(String id) {
    List<ImportClaim> rows = rows(id, "");
    if (rows.isEmpty()) {
      return Optional.empty();
    }
    long epoch = rows.get(rows.size() - 1).epoch();
    return rows.stream()
        .filter(c -> c.epoch() == epoch)
        .findFirst(); // the epoch's first row, as winner() reads it
  }

  /**
   * Claims epoch {@code epoch} of import {@code id} for {@code claimant} and returns the epoch's
   * winner: the claimant's own claim, or that of whoever got there first.
   */
  public ImportClaim claim(
      String id, long epoch, String claimant, ImportClaim.Path path, String owner) {
    hooks.claiming(id, epoch, claimant);
    Instant at = Instant.now().truncatedTo(ChronoUnit.MICROS);
    byte[] row =
        new RowBinaryWriter(256)
            .string(id)
            .uint32(epoch)
            .string(claimant)
            .string(path.text())
            .string(owner)
            .int64(ChronoUnit.MICROS.between(Instant.EPOCH, at))
            .toByteArray();
    store.insertRowBinary(TABLE, COLUMNS, row, "llmlat.claim." + id + "." + epoch);
    ImportClaim winner = winner(id, epoch);
    hooks.claimed(id, claimant, winner);
    return winner;
  }

  /** Gives up {@code held} (a run that stored nothing): the next epoch is free for anyone. */
  void release(ImportClaim held) {
    claim(held.importId(), held.epoch() + 1, held.claimant(), ImportClaim.Path.RELEASED, "");
  }

  /**
   * Keeps {@code held} for a store import that failed after it began writing: still the store
   * path's (its partial copy must not be joined by the ingester's), but with no owner, so a re-run
   * takes it over at once and removes the partial copy.
   */
  void abandon(ImportClaim held) {
    claim(held.importId(), held.epoch() + 1, held.claimant(), ImportClaim.Path.STORE, "");
  }

  /**
   * The row of {@code epoch}, once this store shows it; there is one unless the window was overrun,
   * then the earliest.
   */
  private ImportClaim winner(String id, long epoch) {
    long deadline = System.nanoTime() + VISIBLE_WITHIN.toNanos();
    while (true) {
      List<ImportClaim> rows = rows(id, " AND Epoch = " + epoch);
      if (!rows.isEmpty()) {
        return rows.get(0);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the claim of import "
                + id
                + " (epoch "
                + epoch
                + ") was inserted into "
                + store.description()
                + " but is not visible after "
                + VISIBLE_WITHIN.toSeconds()
                + " s: nothing was written");
      }
      sleep();
    }
  }

  private List<ImportClaim> rows(String id, String andWhere) {
    return store
        .query(
            "SELECT ImportId, Epoch, Claimant, Path, Owner, toUnixTimestamp64Micro(ClaimedAt) FROM "
                + TABLE
                + " WHERE ImportId = {id:String}"
                + andWhere
                + " ORDER BY Epoch, ClaimedAt, Claimant",
            Map.of("id", id))
        .rows()
        .stream()
        .map(
            r ->
                new ImportClaim(
                    r.get(0),
                    Long.parseLong(r.get(1)),
                    r.get(2),
                    ImportClaim.Path.ofText(r.get(3)),
                    r.get(4),
                    Instant.EPOCH.plus(Long.parseLong(r.get(5)), ChronoUnit.MICROS)))
        .toList();
  }

  private static void sleep() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading an import claim back", e);
    }
  }
}
