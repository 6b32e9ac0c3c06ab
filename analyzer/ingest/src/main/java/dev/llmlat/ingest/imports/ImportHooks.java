package dev.llmlat.ingest.imports;

import dev.llmlat.imports.ImportedFile;

/**
 * Points where the parties of an import stop for a test that orders them ({@code
 * ImportClaimInterleavingsTest}); no-ops otherwise. The ingester's own point is {@code
 * SpanIngester.beforeInsert}.
 */
interface ImportHooks {
  ImportHooks NONE = new ImportHooks() {};

  /** A claimant has read the claims and is about to insert its claim of {@code epoch}. */
  default void claiming(String importId, long epoch, String claimant) {}

  /** The claim of {@code claimant} was read back: {@code winner} holds the epoch. */
  default void claimed(String importId, String claimant, ImportClaim winner) {}

  /** An import to Kafka is about to commit its transaction. */
  default void kafkaCommitting(ImportedFile file) {}

  /** A store import is about to commit (check its claim, then move its rows). */
  default void storeCommitting(ImportedFile file) {}
}
