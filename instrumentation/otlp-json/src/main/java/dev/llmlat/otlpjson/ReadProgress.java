package dev.llmlat.otlpjson;

/**
 * Told how far a read has come, in bytes of the file (compressed bytes for gzip), so a caller can
 * draw a bar. Called from the reading thread about every MiB.
 */
@FunctionalInterface
public interface ReadProgress {
  ReadProgress NONE = (done, total) -> {};

  void update(long done, long total);
}
