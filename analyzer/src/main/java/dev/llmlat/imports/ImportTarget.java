package dev.llmlat.imports;

import dev.llmlat.gpu.SpanSink;

/**
 * Where an import's spans go, all or nothing: {@link #commit()} makes every span accepted so far
 * visible at once; {@link #abort()} (or closing without commit) leaves no trace of them.
 */
public interface ImportTarget extends SpanSink, AutoCloseable {
  void commit();

  void abort();

  /** Where, for messages. */
  String description();

  @Override
  void close();
}
