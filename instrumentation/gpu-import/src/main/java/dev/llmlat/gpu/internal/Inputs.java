package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.otlpjson.InputFiles;
import dev.llmlat.otlpjson.InvalidOtlpJsonException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;

/**
 * Opens exports through {@link InputFiles} (plain or gzip, progress in bytes, a bad path worded
 * there) and words their problems as {@link InvalidExportException}s.
 */
public final class Inputs {
  private Inputs() {}

  /** Opens the file, decompressing gzip, and reports {@code base + bytes read} of {@code total}. */
  public static InputStream open(Path file, ImportProgress progress, long base, long total)
      throws IOException {
    try {
      return InputFiles.open(file, progress::update, base, total);
    } catch (InvalidOtlpJsonException e) {
      throw invalid(e);
    }
  }

  /**
   * Refuses a path that is no readable regular file, saying which (see {@link
   * InputFiles#checkReadable}).
   */
  public static void checkReadable(Path file) throws InvalidExportException {
    try {
      InputFiles.checkReadable(file);
    } catch (InvalidOtlpJsonException e) {
      throw invalid(e);
    }
  }

  /** The OTLP/JSON reader's refusal as an export's, with the same message. */
  public static InvalidExportException invalid(InvalidOtlpJsonException e) {
    InvalidExportException invalid = new InvalidExportException(e.file(), e.problem());
    invalid.initCause(e);
    return invalid;
  }

  /** Maps a read failure to the file's problem in words. */
  public static InvalidExportException invalid(Path file, IOException e) {
    if (e instanceof InvalidExportException) {
      return (InvalidExportException) e;
    }
    return invalid(InputFiles.invalid(file, e));
  }
}
