package dev.llmlat.bench;

import dev.llmlat.stats.Quantiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Wall time of the one-shot commands as a user runs them: the launcher script in a new process,
 * from exec to exit, on a small store in a scratch home, against {@code --version} in the same run
 * as the floor. Each command's first run on the build is "cold" (no AOT cache yet; that run records
 * one); "cached" runs start from the cache the launcher made; "no cache" runs have {@code
 * LLMLAT_AOT=off}. Cached and uncached runs alternate so drift hits both alike. Done once on the
 * embedded store and once with {@code llmlat services up}, where commands reach the store process
 * over HTTP.
 */
final class CliBenchmark {
  /** How long the launcher's background step may take to assemble a cache. */
  private static final long CACHE_WAIT_MS = 120_000;

  record Config(
      Path launcher, Path scratch, int runs, int requests, Path gpuExport, boolean services) {}

  /** One command's figures, in seconds. */
  record Figures(String command, double cold, double cached, double uncached) {}

  private final Config config;

  CliBenchmark(Config config) {
    this.config = config;
  }

  void run(PrintWriter out) throws IOException, InterruptedException {
    Files.createDirectories(config.scratch());
    try {
      out.printf(
          "llmlat bench cli: %d runs each, launcher %s, scratch home %s%n",
          config.runs(), config.launcher(), config.scratch());
      out.flush();
      // the store: generated traces written through the real write path and attributed
      launch(
          List.of("demo", "--synthetic", "--requests", Integer.toString(config.requests())),
          Map.of("LLMLAT_AOT", "off"),
          true);
      launch(List.of("analyze"), Map.of("LLMLAT_AOT", "off"), true);
      String trace =
          launch(
                  List.of(
                      "sql",
                      "--format",
                      "tsv",
                      "SELECT TraceId FROM llm_request_attribution FINAL ORDER BY TtftNs DESC LIMIT 1"),
                  Map.of("LLMLAT_AOT", "off"),
                  true)
              .output()
              .lines()
              .skip(1)
              .findFirst()
              .orElseThrow(() -> new IllegalStateException("the demo attributed no request"));
      List<List<String>> commands =
          new ArrayList<>(
              List.of(
                  List.of("sql", "SELECT count() FROM otel_traces"),
                  List.of("explain", trace),
                  List.of("report")));
      if (config.gpuExport() != null) {
        commands.add(List.of("gpu-summary", config.gpuExport().toString()));
      } else {
        out.println(
            "gpu-summary: skipped (no --gpu-export and no H200 capture next to the checkout)");
      }
      out.printf("%nembedded store (the engine runs in the command's process)%n");
      print(measure(commands), out);
      if (config.services()) {
        launch(List.of("services", "up"), Map.of(), true);
        try {
          out.printf("%nwith `llmlat services up` (commands reach the store process over HTTP)%n");
          print(measure(commands), out);
        } finally {
          launch(List.of("services", "down"), Map.of(), false);
        }
      }
    } finally {
      dev.llmlat.services.ChildJvm.deleteRecursively(config.scratch());
    }
  }

  private List<Figures> measure(List<List<String>> commands)
      throws IOException, InterruptedException {
    List<Figures> figures = new ArrayList<>();
    List<String> version = List.of("--version");
    double versionCold = time(version, Map.of());
    double[] versionRuns = new double[config.runs()];
    for (int i = 0; i < versionRuns.length; i++) {
      versionRuns[i] = time(version, Map.of());
    }
    double floor = Quantiles.median(versionRuns);
    figures.add(new Figures("--version", versionCold, floor, floor));
    for (List<String> command : commands) {
      double cold = time(command, Map.of());
      awaitCache(command.get(0));
      double[] cached = new double[config.runs()];
      double[] uncached = new double[config.runs()];
      for (int i = 0; i < config.runs(); i++) {
        cached[i] = time(command, Map.of());
        uncached[i] = time(command, Map.of("LLMLAT_AOT", "off"));
      }
      figures.add(
          new Figures(
              String.join(" ", command),
              cold,
              Quantiles.median(cached),
              Quantiles.median(uncached)));
    }
    return figures;
  }

  private static void print(List<Figures> figures, PrintWriter out) {
    double floor = figures.get(0).cached();
    out.printf(
        "%-44s %9s %9s %9s %12s%n", "command", "cold s", "cached s", "no cache", "x --version");
    for (Figures f : figures) {
      String name = f.command().length() > 44 ? f.command().substring(0, 41) + "..." : f.command();
      out.printf(
          "%-44s %9.3f %9.3f %9.3f %12.2f%n",
          name, f.cold(), f.cached(), f.uncached(), f.cached() / floor);
    }
    out.println(
        "cold: the first run on this build (it records the command's AOT cache); cached and no cache: medians");
    out.flush();
  }

  /** Waits for the launcher's background step to leave the command's cache (or give up on it). */
  private void awaitCache(String command) throws IOException, InterruptedException {
    Path caches = config.scratch().resolve("cache").resolve("aot");
    long deadline = System.currentTimeMillis() + CACHE_WAIT_MS;
    while (System.currentTimeMillis() < deadline) {
      if (Files.isDirectory(caches)) {
        try (Stream<Path> builds = Files.list(caches)) {
          boolean pending =
              builds.anyMatch(
                  build ->
                      Files.exists(build.resolve(command + ".lock"))
                          || Files.exists(build.resolve(command + "-served.lock")));
          if (!pending) {
            return;
          }
        }
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "the AOT cache of `"
            + command
            + "` was not made within "
            + CACHE_WAIT_MS / 1000
            + " s; see "
            + caches
            + "/*/"
            + command
            + ".log");
  }

  private double time(List<String> args, Map<String, String> env)
      throws IOException, InterruptedException {
    long start = System.nanoTime();
    launch(args, env, true);
    return (System.nanoTime() - start) / 1e9;
  }

  record Launched(int exit, String output) {}

  /**
   * Runs the launcher with {@code args} in the scratch home; with {@code check}, a non-zero exit
   * fails the benchmark.
   */
  private Launched launch(List<String> args, Map<String, String> env, boolean check)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(config.launcher().toString()));
    command.addAll(args);
    Path output = Files.createTempFile(config.scratch(), "out", ".txt");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
    builder.environment().put("LLMLAT_HOME", config.scratch().toString());
    builder.environment().remove("LLMLAT_DATA_DIR");
    builder.environment().remove("LLMLAT_CLICKHOUSE_URL");
    builder.environment().putAll(env);
    Process process = builder.start();
    if (!process.waitFor(10, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "`llmlat " + String.join(" ", args) + "` still ran after 10 minutes");
    }
    String text = Files.readString(output);
    Files.delete(output);
    if (check && process.exitValue() != 0) {
      throw new IllegalStateException(
          "`llmlat "
              + String.join(" ", args)
              + "` exited with "
              + process.exitValue()
              + ":\n"
              + text);
    }
    return new Launched(process.exitValue(), text);
  }
}
