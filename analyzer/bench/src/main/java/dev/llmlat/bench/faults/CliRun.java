package dev.llmlat.bench.faults;

import dev.llmlat.cli.Llmlat;
import dev.llmlat.services.LocalServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One {@code llmlat} command run to its end in a JVM of its own: exit code and output. */
record CliRun(int exit, String output) {
  static CliRun run(List<String> args, Path log, Duration timeout)
      throws IOException, InterruptedException {
    Files.deleteIfExists(log);
    Process p = LocalServices.startCli(Llmlat.class.getName(), args, log);
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      p.waitFor();
      return new CliRun(
          -1, "timed out after " + timeout.toSeconds() + " s: llmlat " + String.join(" ", args));
    }
    return new CliRun(p.exitValue(), Files.readString(log));
  }

  /**
   * The command's own error line ({@code llmlat ...: why}), else the first exception or line
   * printed.
   */
  String message() {
    return output
        .lines()
        .filter(l -> l.startsWith("llmlat"))
        .findFirst()
        .or(() -> output.lines().filter(l -> l.contains("Exception")).findFirst())
        .orElse(output.lines().filter(l -> !l.isBlank()).findFirst().orElse("(no output)"));
  }
}
