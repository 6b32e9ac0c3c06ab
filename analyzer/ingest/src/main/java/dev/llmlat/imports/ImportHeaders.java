package dev.llmlat.imports;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The Kafka record headers that name the file an import published a record from: its id (the
 * content hash, {@link ImportedFile}), path, format and options. The ingester tags the rows it
 * stores from such a record with the id and records the import in the store's ledger, so the
 * same file imported into the store later (or earlier) leaves one copy.
 */
public final class ImportHeaders {
  public static final String ID = "llmlat.import.id";
  public static final String FILE = "llmlat.import.file";
  public static final String FORMAT = "llmlat.import.format";
  public static final String OPTIONS = "llmlat.import.options";

  private ImportHeaders() {}

  /** The headers for records of {@code file}. */
  public static Headers of(ImportedFile file) {
    RecordHeaders h = new RecordHeaders();
    h.add(ID, bytes(file.id()));
    h.add(FILE, bytes(file.file()));
    h.add(FORMAT, bytes(file.format()));
    h.add(OPTIONS, bytes(file.options()));
    h.setReadOnly();
    return h;
  }

  /**
   * The file a record came from, if an import published it. A malformed id is no import's: the
   * record is then stored as one of live traffic.
   */
  public static Optional<ImportedFile> read(Headers headers) {
    String id = text(headers, ID);
    if (id == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(new ImportedFile(id, orEmpty(text(headers, FILE)), orEmpty(text(headers, FORMAT)),
          orEmpty(text(headers, OPTIONS))));
    } catch (IllegalArgumentException notAnId) {
      return Optional.empty();
    }
  }

  private static String text(Headers headers, String key) {
    Header h = headers.lastHeader(key);
    return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
