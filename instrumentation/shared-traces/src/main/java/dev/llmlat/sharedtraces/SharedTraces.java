package dev.llmlat.sharedtraces;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The real captures and public traces the tests read, in {@code ../shared/traces} beside the
 * repository (CI has it too; they are never copied into the project): {@code
 * -Dllmlat.sharedTraces=DIR} when set, else the first {@code shared/traces} found walking up from
 * {@code -Dllmlat.moduleDir} or the working directory.
 */
public final class SharedTraces {
  public static final String PROPERTY = "llmlat.sharedTraces";

  private SharedTraces() {}

  /**
   * {@code relative} under the shared traces; fails naming where it looked when they cannot be
   * found.
   */
  public static Path resolve(String relative) {
    return root().resolve(relative);
  }

  public static Path root() {
    String configured = System.getProperty(PROPERTY);
    if (configured != null && !configured.isBlank()) {
      Path root = Path.of(configured);
      if (!Files.isDirectory(root)) {
        throw new IllegalStateException("-D" + PROPERTY + "=" + configured + " is not a directory");
      }
      return root;
    }
    Path start =
        Path.of(System.getProperty("llmlat.moduleDir", System.getProperty("user.dir")))
            .toAbsolutePath();
    for (Path d = start; d != null; d = d.getParent()) {
      if (Files.isDirectory(d.resolve("shared/traces"))) {
        return d.resolve("shared/traces");
      }
    }
    throw new IllegalStateException(
        "the shared traces (shared/traces) are not above "
            + start
            + "; set -D"
            + PROPERTY
            + "=DIR");
  }
}
