package dev.llmlat.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What a directory a user names as an embedded store holds, decided from the files alone (opening
 * the engine would make a store in it). chDB keeps its catalogue in {@code metadata/}; llmlat's
 * schema begins with the migrations table, so {@code metadata/default/llmlat_migrations.sql} marks
 * a store of ours. Commands that read refuse anything else; commands that write make a store only
 * in a new or empty directory (or one chDB already keeps, whose schema they bring up to date).
 */
final class StoreDirectory {
  /** The migrations table's definition, written by the engine when the schema's first step runs. */
  static final Path MARK = Path.of("metadata", "default", "llmlat_migrations.sql");

  private StoreDirectory() {}

  /** Whether {@code dir} holds an llmlat store. */
  static boolean isStore(Path dir) {
    return Files.isRegularFile(dir.resolve(MARK));
  }

  /**
   * Whether the engine keeps {@code dir} (its catalogue is there), with or without llmlat's schema.
   */
  private static boolean isEngineDirectory(Path dir) {
    return Files.isDirectory(dir.resolve("metadata"));
  }

  /** Refuses (exit 2) a {@code dir} named by {@code option} for reading that is not a store. */
  static void requireStore(String option, Path dir) {
    if (isStore(dir)) {
      return;
    }
    String make = "; make one with llmlat migrate --data-dir " + dir + " (or import into it)";
    if (!Files.exists(dir)) {
      throw new IllegalArgumentException(
          option + " " + dir + ": no such directory, so no llmlat store" + make);
    }
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException(
          option + " " + dir + " is not a directory (an llmlat store's data directory)");
    }
    if (isEmpty(dir)) {
      throw new IllegalArgumentException(
          option + " " + dir + " is an empty directory, not an llmlat store" + make);
    }
    if (isEngineDirectory(dir)) {
      throw new IllegalArgumentException(
          option
              + " "
              + dir
              + " is a chDB data directory without llmlat's schema: run llmlat migrate --data-dir "
              + dir
              + " to add it");
    }
    throw new IllegalArgumentException(
        option + " " + dir + " is not an llmlat store (no " + MARK + " in it)");
  }

  /**
   * Refuses (exit 2) a {@code dir} named by {@code option} for writing unless it is a store, new,
   * or empty.
   */
  static void requireStoreOrEmpty(String option, Path dir) {
    if (!Files.exists(dir)
        || isStore(dir)
        || (Files.isDirectory(dir) && (isEmpty(dir) || isEngineDirectory(dir)))) {
      return;
    }
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException(
          option + " " + dir + " is not a directory (an llmlat store's data directory)");
    }
    throw new IllegalArgumentException(
        option
            + " "
            + dir
            + " is not empty and not an llmlat store (no "
            + MARK
            + " in it): name an existing store, or a new or empty directory for a new one");
  }

  private static boolean isEmpty(Path dir) {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries.findAny().isEmpty();
    } catch (IOException e) {
      throw new IllegalArgumentException(
          dir + " cannot be read: " + e.getClass().getSimpleName() + " " + e.getMessage(), e);
    }
  }
}
