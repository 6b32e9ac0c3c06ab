package dev.llmlat.imports;

import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.spans.GpuKernelRowEncoder;
import dev.llmlat.spans.OtelTracesRowEncoder;
import dev.llmlat.spans.SpanRouter;
import dev.llmlat.store.ClickHouseStore;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;

/**
 * Writes an import straight into the store: rows go to staging tables of the same structure
 * first, and move into {@code otel_traces} / {@code gpu_kernels} with one INSERT ... SELECT each
 * on {@link #commit()}, so a failed import leaves the real tables untouched.
 *
 * <p>An import of a known file ({@link ImportedFile}) is also idempotent, through the store's
 * ledger ({@link StoreImportLedger}): its rows carry its id (spans in the resource attribute
 * {@value #IMPORT_ID_ATTRIBUTE}, kernels in {@code gpu_kernels.ImportId}); the commit records it
 * pending, removes any earlier copy of the same file (one an interrupted run left half-moved, or
 * the one a forced re-import replaces), moves both tables, and only then records it done. Killed
 * anywhere in between, the ledger says pending and the next run removes the partial copy first.
 */
public final class StoreImportTarget implements ImportTarget {
  public static final String IMPORT_ID_ATTRIBUTE = SpanRouter.IMPORT_ID_ATTRIBUTE;
  private static final int FLUSH_ROWS = 50_000;

  private final ClickHouseStore store;
  private final ImportedFile file; // null: an untracked import (no ledger, rows untagged)
  private final String cluster; // null: one node
  private final StoreImportLedger ledger;
  private final Optional<ImportRecord> earlier;
  private final StagingTables.Owner owner = StagingTables.Owner.self();
  private String tracesStaging;
  private String kernelsStaging;
  private SpanRouter rows = new SpanRouter();
  private long spans;
  private long kernels;
  private boolean open = true;
  private Runnable betweenTables = () -> { }; // test hook: an interruption between the two moves

  /** An import the store keeps no record of (a live probe session: there is no file to recognise). */
  public StoreImportTarget(ClickHouseStore store) {
    this(store, null, null);
  }

  /**
   * An import of {@code file}, checked against the store's ledger as it opens ({@link #earlier()}).
   * {@code cluster}: the ClickHouse cluster the store's schema was made for, or null.
   */
  public StoreImportTarget(ClickHouseStore store, ImportedFile file, String cluster) {
    this.store = store;
    this.file = file;
    this.cluster = cluster;
    this.ledger = new StoreImportLedger(store);
    this.earlier = file == null ? Optional.empty() : ledger.find(file.id());
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
    flush();
    Instant pendingAt = null;
    if (file != null) {
      // read again: another run of the same file may have committed while this one staged
      Optional<ImportRecord> latest = ledger.find(file.id());
      pendingAt = after(latest.map(ImportRecord::at).orElse(Instant.EPOCH));
      ledger.write(new ImportRecord(file, ImportRecord.Status.PENDING, 0, 0, pendingAt));
      if (latest.isPresent()) {
        removeCopy(file.id());
      }
    }
    String tag = file == null ? null : file.id();
    move(OtelTracesRowEncoder.TABLE, tracesStaging,
        tag == null ? "" : " REPLACE (mapUpdate(ResourceAttributes, map('" + IMPORT_ID_ATTRIBUTE + "', '" + tag + "')) AS ResourceAttributes)");
    betweenTables.run();
    move(GpuKernelRowEncoder.TABLE, kernelsStaging, tag == null ? "" : " REPLACE ('" + tag + "' AS ImportId)");
    if (file != null) {
      ledger.write(new ImportRecord(file, ImportRecord.Status.DONE, spans, kernels, after(pendingAt)));
    }
    open = false;
    dropStaging();
  }

  /**
   * Staged rows into the real table. Never deduplicated: a copy removed just before may have left
   * identical blocks in the deduplication log, and the ledger already guarantees one copy.
   */
  private void move(String table, String staging, String replace) {
    store.execute("INSERT INTO " + table + " SELECT *" + replace + " FROM " + staging
        + " SETTINGS insert_deduplicate = 0, insert_distributed_sync = 1");
  }

  /** Removes every row an earlier run of import {@code id} stored. */
  private void removeCopy(String id) {
    removeRows(OtelTracesRowEncoder.TABLE, "ResourceAttributes['" + IMPORT_ID_ATTRIBUTE + "'] = {id:String}", id);
    removeRows(GpuKernelRowEncoder.TABLE, "ImportId = {id:String}", id);
  }

  private void removeRows(String table, String condition, String id) {
    // the lookup is cheap (bloom filter on the attribute values; a LowCardinality column); a delete is not
    if (store.query("SELECT count() FROM " + table + " WHERE " + condition, Map.of("id", id)).single().equals("0")) {
      return;
    }
    String where = condition.replace("{id:String}", "'" + id + "'"); // an id is 32 hex digits: a safe literal
    store.execute(cluster == null
        ? "DELETE FROM " + table + " WHERE " + where
        : "DELETE FROM " + table + "_local ON CLUSTER '" + cluster + "' WHERE " + where);
  }

  /** A time after {@code previous}: ledger rows replace each other by time, so each must be later than the last. */
  private static Instant after(Instant previous) {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
    return now.isAfter(previous) ? now : previous.plus(1, ChronoUnit.MICROS);
  }

  @Override
  public void abort() {
    if (open) {
      open = false;
      dropStaging();
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
