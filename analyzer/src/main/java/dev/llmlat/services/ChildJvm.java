package dev.llmlat.services;

import dev.llmlat.home.LlmlatHome;
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

  public static Process start(List<String> jvmOptions, String mainClass, List<String> args, Path log) throws IOException {
    Files.createDirectories(log.getParent());
    List<String> command = new ArrayList<>();
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

  /** The last {@code n} lines of a log, indented, for error messages. */
  public static String tail(Path log, int n) {
    try {
      List<String> lines = Files.readAllLines(log);
      return "\n  " + String.join("\n  ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }
}
