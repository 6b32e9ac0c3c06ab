package dev.llmlat.ingest.imports;

import dev.llmlat.imports.ImportRecord;
import dev.llmlat.imports.ImportTarget;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.ingest.spans.GpuKernelRowEncoder;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.ingest.spans.SpanRouter;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.store.ClickHouseStore;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;

/**
 * Writes an import straight into the store: rows go to staging tables of the same structure first,
 * and move into {@code otel_traces} / {@code gpu_kernels} with one INSERT ... SELECT each on {@link
 * #commit()}, so a failed import leaves the real tables untouched.
 *
 * <p>An import of a known file ({@link ImportedFile}) is also idempotent, through the store's
 * ledger ({@link StoreImportLedger}): its rows carry its id (spans in the resource attribute
 * {@value #IMPORT_ID_ATTRIBUTE}, kernels in {@code gpu_kernels.ImportId}); the commit records it
 * pending, removes any earlier copy of the same file (one an interrupted run left half-moved, or
 * the one a forced re-import replaces), moves both tables, and only then records it done. Killed
 * anywhere in between, the ledger says pending and the next run removes the partial copy first.
 *
 * <p>Whether this run writes at all is decided by its claim ({@link ImportClaims}): claimed as it
 * opens when there is nothing to replace, else at its first write; a claim lost to the ingester at
 * open makes {@link #earlier()} say the file is imported through Kafka, and one lost later fails
 * the import before anything reaches the real tables. A run that fails releases the claim, or, once
 * its commit began writing, leaves it to a re-run (which removes the partial copy).
 */
public final class StoreImportTarget implements ImportTarget {
  public static final String IMPORT_ID_ATTRIBUTE = SpanRouter.IMPORT_ID_ATTRIBUTE;
  private static final int FLUSH_ROWS = 50_000;

  private final ClickHouseStore store;
  private final ImportedFile file; // null: an untracked import (no ledger, rows untagged)
  private final String cluster; // null: one node
  private final StoreImportLedger ledger;
  private Optional<ImportRecord> earlier;
  private final StagingTables.Owner owner = StagingTables.Owner.self();
  private final ImportHooks hooks;
  private final ImportClaims claims;
  private final String claimant = ImportClaims.storeClaimant();
  private ImportClaim
      seen; // the claim in force when this run decided (null: none); the next epoch is this run's
  // to take
  private ImportClaim held; // this run's claim, once it won one
  private boolean
      writing; // the commit began changing the real tables: failing now, the claim stays for a
  // re-run
  private String tracesStaging;
  private String kernelsStaging;
  private SpanRouter rows = new SpanRouter();
  private long spans;
  private long kernels;
  private boolean open = true;
  private Runnable betweenTables = () -> {}; // test hook: an interruption between the two moves

  /**
   * An import the store keeps no record of (a live probe session: there is no file to recognise).
   */
  public StoreImportTarget(ClickHouseStore store) {
    this(store, null, null);
  }

  /**
   * An import of {@code file}, checked against the store's ledger as it opens ({@link #earlier()}).
   * {@code cluster}: the ClickHouse cluster the store's schema was made for, or null.
   */
  public StoreImportTarget(ClickHouseStore store, ImportedFile file, String cluster) {
    this(store, file, cluster, ImportHooks.NONE);
  }

  StoreImportTarget(ClickHouseStore store, ImportedFile file, String cluster, ImportHooks hooks) {
    this.store = store;
    this.file = file;
    this.cluster = cluster;
    this.hooks = hooks;
    this.ledger = new StoreImportLedger(store);
    this.claims = new ImportClaims(store, hooks);
    this.earlier = Optional.empty();
    if (file != null) {
      open(ledger.find(file.id()), claims.latest(file.id()));
    }
  }

  /**
   * Decides what {@link #earlier()} says, and claims the file at once unless this run may be about
   * to replace a copy: only --force makes that run go on, and it is not known here.
   */
  private void open(Optional<ImportRecord> recorded, Optional<ImportClaim> latest) {
    seen = latest.orElse(null);
    if (seen != null && seen.path() == ImportClaim.Path.KAFKA) {
      earlier = Optional.of(throughKafka(recorded, seen));
      return;
    }
    if (seen != null
        && seen.path() == ImportClaim.Path.STORE
        && !finished(seen, recorded)
        && !seen.abandoned(Instant.now())) {
      throw new IllegalStateException(running(seen));
    }
    earlier = recorded;
    if (earlier.isEmpty() || !earlier.get().done()) {
      takeClaim(true);
    }
  }

  /**
   * What the ledger says of a file the ingester claimed, or, before its first batch recorded it,
   * that it began.
   */
  private ImportRecord throughKafka(Optional<ImportRecord> recorded, ImportClaim claim) {
    return recorded
        .filter(ImportRecord::ingested)
        .orElse(new ImportRecord(file, ImportRecord.Status.INGESTED, 0, 0, claim.at()));
  }

  /**
   * A store import's claim whose run went on to record the file done (the same process wrote both
   * times).
   */
  private static boolean finished(ImportClaim claim, Optional<ImportRecord> recorded) {
    return recorded.isPresent()
        && recorded.get().done()
        && !recorded.get().ingested()
        && !recorded.get().at().isBefore(claim.at());
  }

  private String running(ImportClaim claim) {
    return "another import of "
        + file.file()
        + " into "
        + store.description()
        + " is running ("
        + owned(claim)
        + ", since "
        + claim.at()
        + "): it stores the file; nothing was imported";
  }

  private static String owned(ImportClaim claim) {
    return StagingTables.Owner.parse(claim.owner())
        .map(o -> "host " + o.host() + ", pid " + o.pid())
        .orElse(claim.claimant());
  }

  /**
   * Takes the epoch after {@link #seen}. Lost to the ingester as the run opens, {@link #earlier()}
   * says so (and --force may take the next one); lost otherwise, the run fails before writing.
   */
  private void takeClaim(boolean opening) {
    while (true) {
      ImportClaim winner =
          claims.claim(
              file.id(),
              seen == null ? 1 : seen.epoch() + 1,
              claimant,
              ImportClaim.Path.STORE,
              owner.comment());
      if (winner.heldBy(claimant)) {
        held = winner;
        return;
      }
      seen = winner;
      if (winner.released()) {
        continue; // a run gave up the epoch: the next one is free
      }
      if (opening && winner.path() == ImportClaim.Path.KAFKA) {
        earlier = Optional.of(throughKafka(ledger.find(file.id()), winner));
        return;
      }
      throw new IllegalStateException(lostTo(winner));
    }
  }

  private String lostTo(ImportClaim winner) {
    return winner.path() == ImportClaim.Path.KAFKA
        ? "already imported into "
            + store.description()
            + " through Kafka: the ingester claimed "
            + file.file()
            + " on "
            + winner.at()
            + " while this import ran; nothing was imported"
        : running(winner);
  }

  /** Before this run writes: its claim, taken now if it did not take one as it opened. */
  private void ensureClaim() {
    if (file != null && held == null) {
      takeClaim(false);
    }
  }

  void betweenTables(Runnable hook) {
    this.betweenTables = hook;
  }

  @Override
  public Optional<ImportRecord> earlier() {
    return earlier;
  }

  @Override
  public void accept(SpanBatch batch) {
    ensureClaim();
    for (ExportTraceServiceRequest request : batch.requests()) {
      rows.add(request);
    }
    if (rows.spans() + rows.kernels() >= FLUSH_ROWS) {
      flush();
    }
  }

  private void flush() {
    if (tracesStaging == null) {
      tracesStaging = StagingTables.create(store, OtelTracesRowEncoder.TABLE, owner);
      kernelsStaging = StagingTables.create(store, GpuKernelRowEncoder.TABLE, owner);
    }
    spans += rows.spans();
    kernels += rows.kernels();
    rows.insertInto(store, null, tracesStaging, kernelsStaging);
    rows = new SpanRouter();
  }

  @Override
  public void commit() {
    ensureClaim();
    if (file != null) {
      hooks.storeCommitting(file);
    }
    flush();
    Instant pendingAt = null;
    if (file != null) {
      // the claim decides: taken over since (--force elsewhere), this run writes nothing
      ImportClaim inForce = claims.latest(file.id()).orElse(held);
      if (!inForce.heldBy(claimant)) {
        throw new IllegalStateException(lostTo(inForce));
      }
      writing = true;
      // the copy this run replaces, if any: the one --force replaces, or an interrupted run's
      // partial one
      Optional<ImportRecord> latest = ledger.find(file.id());
      pendingAt = after(latest.map(ImportRecord::at).orElse(Instant.EPOCH));
      ledger.write(new ImportRecord(file, ImportRecord.Status.PENDING, 0, 0, pendingAt));
      if (latest.isPresent()) {
        removeCopy(file.id());
      }
    }
    String tag = file == null ? null : file.id();
    move(
        OtelTracesRowEncoder.TABLE,
        tracesStaging,
        tag == null
            ? ""
            : " REPLACE (mapUpdate(ResourceAttributes, map('"
                + IMPORT_ID_ATTRIBUTE
                + "', '"
                + tag
                + "')) AS ResourceAttributes)");
    betweenTables.run();
    move(
        GpuKernelRowEncoder.TABLE,
        kernelsStaging,
        tag == null ? "" : " REPLACE ('" + tag + "' AS ImportId)");
    if (file != null) {
      ledger.write(
          new ImportRecord(file, ImportRecord.Status.DONE, spans, kernels, after(pendingAt)));
    }
    open = false;
    dropStaging();
  }

  /**
   * Staged rows into the real table. Never deduplicated: a copy removed just before may have left
   * identical blocks in the deduplication log, and the claim already guarantees one copy.
   */
  private void move(String table, String staging, String replace) {
    store.execute(
        "INSERT INTO "
            + table
            + " SELECT *"
            + replace
            + " FROM "
            + staging
            + " SETTINGS insert_deduplicate = 0, insert_distributed_sync = 1");
  }

  /** Removes every row an earlier run of import {@code id} stored. */
  private void removeCopy(String id) {
    removeRows(
        OtelTracesRowEncoder.TABLE,
        "ResourceAttributes['" + IMPORT_ID_ATTRIBUTE + "'] = {id:String}",
        id);
    removeRows(GpuKernelRowEncoder.TABLE, "ImportId = {id:String}", id);
  }

  private void removeRows(String table, String condition, String id) {
    // the lookup is cheap (bloom filter on the attribute values; a LowCardinality column); a delete
    // is not
    if (store
        .query("SELECT count() FROM " + table + " WHERE " + condition, Map.of("id", id))
        .single()
        .equals("0")) {
      return;
    }
    String where =
        condition.replace("{id:String}", "'" + id + "'"); // an id is 32 hex digits: a safe literal
    store.execute(
        cluster == null
            ? "DELETE FROM " + table + " WHERE " + where
            : "DELETE FROM " + table + "_local ON CLUSTER '" + cluster + "' WHERE " + where);
  }

  /**
   * A time after {@code previous}: ledger rows replace each other by time, so each must be later
   * than the last.
   */
  private static Instant after(Instant previous) {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
    return now.isAfter(previous) ? now : previous.plus(1, ChronoUnit.MICROS);
  }

  @Override
  public void abort() {
    if (open) {
      open = false;
      try {
        dropStaging();
      } finally {
        release();
      }
    }
  }

  /**
   * Gives the claim up if this run wrote nothing to the real tables, so the file is not left
   * unclaimable; else leaves it to a re-run, which removes the partial copy.
   */
  private void release() {
    if (held != null) {
      try {
        if (writing) {
          claims.abandon(held);
        } else {
          claims.release(held);
        }
      } catch (RuntimeException e) {
        // the claim stays as a killed run's does: once this process is gone a re-run takes it over
      }
      held = null;
    }
  }

  private void dropStaging() {
    if (tracesStaging != null) {
      StagingTables.drop(store, tracesStaging);
      StagingTables.drop(store, kernelsStaging);
    }
  }

  @Override
  public String description() {
    return store.description();
  }

  @Override
  public void close() {
    abort();
  }
}
