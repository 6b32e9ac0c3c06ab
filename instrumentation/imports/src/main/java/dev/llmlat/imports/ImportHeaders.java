package dev.llmlat.imports;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The Kafka record headers that name the file an import published a record from: its id (the
 * content hash, {@link ImportedFile}), path, format and options. The ingester tags the rows it
 * stores from such a record with the id and records the import in the store's ledger, so the same
 * file imported into the store later (or earlier) leaves one copy. {@link #RUN} names the run of
 * the import, for whom the ingester claims the file ({@link ImportClaims}).
 */
public final class ImportHeaders {
  public static final String ID = "llmlat.import.id";
  public static final String FILE = "llmlat.import.file";
  public static final String FORMAT = "llmlat.import.format";
  public static final String OPTIONS = "llmlat.import.options";
  public static final String RUN = "llmlat.import.run";

  /** The run of records published before runs were named: all one run to the ingester. */
  static final String UNNAMED_RUN = "unnamed";

  private ImportHeaders() {}

  /** The headers for records of {@code file}, published by import run {@code run}. */
  public static Headers of(ImportedFile file, String run) {
    RecordHeaders h = new RecordHeaders();
    h.add(RUN, bytes(run));
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
      return Optional.of(
          new ImportedFile(
              id,
              orEmpty(text(headers, FILE)),
              orEmpty(text(headers, FORMAT)),
              orEmpty(text(headers, OPTIONS))));
    } catch (IllegalArgumentException notAnId) {
      return Optional.empty();
    }
  }

  /**
   * The claimant for the records of an import (in the ingester's claims table): {@code
   * kafka:<run>}, every ingester storing the run's records holding the claim together.
   */
  public static String claimant(Headers headers) {
    String run = text(headers, RUN);
    return kafkaClaimant(run == null || run.isEmpty() ? UNNAMED_RUN : run);
  }

  public static String kafkaClaimant(String run) {
    return "kafka:" + run;
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
