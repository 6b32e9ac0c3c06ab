package dev.llmlat.services;

import dev.llmlat.runtime.home.LlmlatHome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts JVMs from this process's own Java and classpath, detached from it: output appended to a
 * log file, so they keep running after the command that started them returns.
 */
public final class ChildJvm {
  private ChildJvm() {}

  public static Process start(
      List<String> jvmOptions, String mainClass, List<String> args, Path log) throws IOException {
    return start(List.of(), jvmOptions, mainClass, args, log);
  }

  /** The same, with {@code launcher} (e.g. {@code taskset -c 1}) in front of the java command. */
  public static Process start(
      List<String> launcher, List<String> jvmOptions, String mainClass, List<String> args, Path log)
      throws IOException {
    Files.createDirectories(log.getParent());
    List<String> command = new ArrayList<>(launcher);
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    String home = System.getProperty(LlmlatHome.PROPERTY);
    if (home != null) {
      command.add("-D" + LlmlatHome.PROPERTY + "=" + home); // children share the parent's home
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(args);
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .start();
  }

  /**
   * Waits until {@code log} has a line starting with {@code prefix} and returns the rest of it;
   * fails naming the log when the process exits first or {@code timeout} passes.
   */
  public static String awaitLine(
      Process process, Path log, String prefix, java.time.Duration timeout)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (Files.exists(log)) {
        for (String line : Files.readAllLines(log)) {
          if (line.startsWith(prefix)) {
            return line.substring(prefix.length()).strip();
          }
        }
      }
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "process " + process.pid() + " exited; see " + log + tail(log, 10));
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "process "
            + process.pid()
            + " did not print '"
            + prefix
            + "' within "
            + timeout.toSeconds()
            + " s; see "
            + log);
  }

  /** Deletes a directory tree (scratch directories of benchmarks and demo runs). */
  public static void deleteRecursively(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** The last {@code n} lines of a log, indented, for error messages. */
  public static String tail(Path log, int n) {
    try {
      List<String> lines = Files.readAllLines(log);
      return "\n  "
          + String.join("\n  ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }
}
