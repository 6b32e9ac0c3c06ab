package dev.llmlat.gpu;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The file is not a readable export of the expected kind: a corrupt or non-Nsight sqlite, a
 * truncated gzip, JSON of the wrong shape, an empty file. The message names the file and the
 * problem. Thrown before anything reaches the sink wherever the problem can be seen up front.
 */
public final class InvalidExportException extends IOException {
  private static final long serialVersionUID = 1L;

  private final Path file;

  public InvalidExportException(Path file, String problem) {
    super(file + ": " + problem);
    this.file = file;
  }

  public InvalidExportException(Path file, String problem, Throwable cause) {
    super(
        file + ": " + problem + (cause.getMessage() == null ? "" : " (" + cause.getMessage() + ")"),
        cause);
    this.file = file;
  }

  public Path file() {
    return file;
  }
}
