package dev.llmlat.imports;

import dev.llmlat.otlpkafka.SpanSink;
import java.util.Optional;

/**
 * Where an import's spans go, all or nothing: {@link #commit()} makes every span accepted so far
 * visible at once; {@link #abort()} (or closing without commit) leaves no trace of them.
 */
public interface ImportTarget extends SpanSink, AutoCloseable {
  void commit();

  void abort();

  /**
   * What this target's ledger knew of the same file when the target opened: done (importing again
   * would store a second copy unless it replaces the first) or pending (an interrupted import).
   * Empty for a file never imported here, and for targets that keep no ledger.
   */
  default Optional<ImportRecord> earlier() {
    return Optional.empty();
  }

  /** Where, for messages. */
  String description();

  @Override
  void close();
}
