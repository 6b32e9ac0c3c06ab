package dev.llmlat.cli;

import dev.llmlat.otlpjson.InputFiles;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A file the user named for a command to write ({@code report --html}, {@code export -o}). {@link
 * #check} looks at the path before the command does its work, so a path that cannot be written
 * fails at once, with exit 2 and what is wrong with it: the directory is missing, the path is a
 * directory, a FIFO or another non-regular file, permission is denied. {@link #write} writes a
 * temporary file next to it and renames that into place, so no reader sees half a file; on any
 * failure the temporary file is removed and an existing file stays as it was.
 */
final class OutputFile {
  /** Writes the content. */
  @FunctionalInterface
  interface Body {
    void write(OutputStream out) throws IOException;
  }

  private final String option;
  private final Path target;

  private OutputFile(String option, Path target) {
    this.option = option;
    this.target = target;
  }

  /** The absolute path written (a symbolic link's target: the link stays). */
  Path path() {
    return target;
  }

  /**
   * Checks that {@code path} can be written as a regular file.
   *
   * @param option the option that named it, for messages ({@code --html})
   * @throws IllegalArgumentException naming the path and what is wrong (the CLI exits 2)
   */
  static OutputFile check(String option, Path path) {
    Path target = path.toAbsolutePath().normalize();
    if (Files.isSymbolicLink(target) && Files.exists(target)) {
      try {
        target = target.toRealPath(); // replace the file the link names, not the link
      } catch (IOException e) {
        throw usage(option, target, "cannot resolve the symbolic link (" + e.getMessage() + ")");
      }
    }
    if (Files.isDirectory(target)) {
      throw usage(
          option,
          target,
          "is a directory; name a file in it, e.g. " + target.resolve("out" + extension(path)));
    }
    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(target)) {
      if (!Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)) {
        throw usage(
            option,
            target,
            "is "
                + InputFiles.kind(target, LinkOption.NOFOLLOW_LINKS)
                + ", not a regular file (the output is written whole and"
                + " renamed into place); name a regular file");
      }
      if (!Files.isWritable(target)) {
        throw usage(option, target, "permission denied: the file is not writable");
      }
    }
    Path dir = target.getParent();
    if (dir == null || !Files.exists(dir)) {
      throw usage(option, target, "directory " + dir + " does not exist");
    }
    if (!Files.isDirectory(dir)) {
      throw usage(option, target, dir + " is not a directory");
    }
    if (!Files.isWritable(dir)) {
      throw usage(
          option,
          target,
          readOnly(dir)
              ? "the file system of " + dir + " is read-only"
              : "permission denied: cannot create files in " + dir);
    }
    return new OutputFile(option, target);
  }

  /**
   * Writes {@code body} to a temporary file in the target's directory and renames it into place.
   * What {@code body} throws comes out unchanged; a problem with the file itself (permissions
   * changed since {@link #check}, the directory removed) as {@link IllegalArgumentException} naming
   * the path. No temporary file is left behind either way.
   */
  void write(Body body) throws IOException {
    Path dir = target.getParent();
    Path tmp =
        dir.resolve(
            "."
                + target.getFileName()
                + "."
                + Long.toUnsignedString(ThreadLocalRandom.current().nextLong(), 36)
                + ".tmp");
    OutputStream out;
    try {
      // CREATE_NEW with the default mode (umask), unlike createTempFile's 0600: the file ends up
      // readable as before
      out = Files.newOutputStream(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw problem(e);
    }
    boolean moved = false;
    try {
      try (out) {
        body.write(out);
      }
      keepMode(tmp);
      try {
        Files.move(
            tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        throw problem(e);
      }
      moved = true;
    } finally {
      if (!moved) {
        try {
          Files.deleteIfExists(tmp);
        } catch (IOException ignored) {
          // the first failure is the one to report
        }
      }
    }
  }

  /** An existing file keeps its permissions when replaced (as it would when written in place). */
  private void keepMode(Path tmp) {
    try {
      if (Files.exists(target)) {
        Files.setPosixFilePermissions(tmp, Files.getPosixFilePermissions(target));
      }
    } catch (IOException | UnsupportedOperationException ignored) {
      // not POSIX, or not ours to read: the default mode will do
    }
  }

  private RuntimeException problem(IOException e) throws IOException {
    if (e instanceof AccessDeniedException || isPermission(e)) {
      return usage(option, target, "permission denied (" + e.getMessage() + ")");
    }
    if (e instanceof NoSuchFileException) {
      return usage(
          option, target, "directory " + target.getParent() + " does not exist (any more)");
    }
    if (e instanceof FileSystemException
        && String.valueOf(((FileSystemException) e).getReason()).contains("directory")) {
      return usage(option, target, "is a directory");
    }
    throw new IOException(option + " " + target + ": " + e.getMessage(), e);
  }

  private static boolean isPermission(IOException e) {
    String reason = e instanceof FileSystemException ? ((FileSystemException) e).getReason() : null;
    // EPERM (an immutable file or directory) and EROFS arrive as plain FileSystemExceptions
    return reason != null
        && (reason.contains("not permitted") || reason.contains("Read-only file system"));
  }

  private static IllegalArgumentException usage(String option, Path target, String problem) {
    return new IllegalArgumentException(option + " " + target + ": " + problem);
  }

  private static boolean readOnly(Path dir) {
    try {
      return Files.getFileStore(dir).isReadOnly();
    } catch (IOException e) {
      return false;
    }
  }

  private static String extension(Path p) {
    String name = p.getFileName() == null ? "" : p.getFileName().toString();
    int dot = name.lastIndexOf('.');
    return dot > 0 ? name.substring(dot) : "";
  }
}
