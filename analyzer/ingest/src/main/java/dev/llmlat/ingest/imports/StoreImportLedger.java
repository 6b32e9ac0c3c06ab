package dev.llmlat.ingest.imports;

import dev.llmlat.imports.ImportRecord;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowBinaryWriter;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The store's record of its imports: table {@code llmlat_imports} (migration 0007), latest row per
 * import.
 */
public final class StoreImportLedger {
  static final String TABLE = "llmlat_imports";
  private static final List<String> COLUMNS =
      List.of("ImportId", "File", "Format", "Options", "Status", "Spans", "Kernels", "ImportedAt");

  private final ClickHouseStore store;

  public StoreImportLedger(ClickHouseStore store) {
    this.store = store;
  }

  /** The latest record of import {@code id}, if the store has one. */
  public Optional<ImportRecord> find(String id) {
    List<List<String>> rows =
        store
            .query(
                "SELECT ImportId, File, Format, Options, Status, Spans, Kernels,"
                    + " toUnixTimestamp64Micro(ImportedAt) FROM "
                    + TABLE
                    + " FINAL WHERE ImportId = {id:String}",
                Map.of("id", id))
            .rows();
    if (rows.isEmpty()) {
      return Optional.empty();
    }
    List<String> r = rows.get(0);
    return Optional.of(
        new ImportRecord(
            new ImportedFile(r.get(0), r.get(1), r.get(2), r.get(3)),
            ImportRecord.Status.ofText(r.get(4)),
            Long.parseLong(r.get(5)),
            Long.parseLong(r.get(6)),
            Instant.EPOCH.plus(Long.parseLong(r.get(7)), ChronoUnit.MICROS)));
  }

  /** Records {@code record}; it replaces any earlier one of the same import whose time is older. */
  public void write(ImportRecord record) {
    long micros = ChronoUnit.MICROS.between(Instant.EPOCH, record.at());
    ImportedFile f = record.file();
    byte[] row =
        new RowBinaryWriter(256)
            .string(f.id())
            .string(f.file())
            .string(f.format())
            .string(f.options())
            .string(record.status().text())
            .int64(record.spans())
            .int64(record.kernels())
            .int64(micros)
            .toByteArray();
    // the token makes a retried write of this very row a no-op where a deduplication window applies
    store.insertRowBinary(
        TABLE,
        COLUMNS,
        row,
        "llmlat.import." + f.id() + "." + record.status().text() + "." + micros);
  }
}
