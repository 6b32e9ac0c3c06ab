package dev.llmlat.gpu;

/**
 * Told how far an import or summary has come, in units of the reader's choosing (rows of the
 * activity tables for Nsight exports, bytes of the file for JSON), so a CLI can draw a bar. Called
 * from the importing thread, at most every few thousand units, and once at the end with {@code done
 * == total}.
 */
@FunctionalInterface
public interface ImportProgress {
  ImportProgress NONE = (done, total) -> {};

  void update(long done, long total);
}
