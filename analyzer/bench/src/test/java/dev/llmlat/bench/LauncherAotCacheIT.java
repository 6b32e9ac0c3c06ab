package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's AOT caches as a user meets them: {@code ./llmlat} on the built distribution, in a
 * home of its own. A typed command's first run records, a background step leaves the cache, the
 * next run maps it, and the output never depends on any of it.
 */
class LauncherAotCacheIT {
  private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
  private static final Map<String, String> NO_CACHE = Map.of("LLMLAT_AOT", "off");

  @TempDir Path home;

  record Result(int exit, String out, String err) {}

  @Test
  void theFirstRunOfACommandMakesItsCacheAndTheNextRunUsesItWithTheSameOutput() throws Exception {
    assertThat(ROOT.resolve("llmlat")).isExecutable();
    run(NO_CACHE, "demo", "--synthetic", "--requests", "20");
    run(NO_CACHE, "analyze");
    String sql =
        "SELECT TraceId, TtftNs, QueueNs FROM llm_request_attribution FINAL ORDER BY TraceId";
    String expected = run(NO_CACHE, "sql", "--format", "tsv", sql).out();
    assertThat(expected.lines()).hasSize(21);
    assertThat(caches()).as("no cache is made while LLMLAT_AOT=off").isEmpty();

    assertThat(run(Map.of(), "sql", "--format", "tsv", sql).out())
        .as("the recording run")
        .isEqualTo(expected);
    Path cache = awaitCache("sql");

    Path log = home.resolve("aot.log");
    // JDK_JAVA_OPTIONS is read by the java launcher itself, so the cache's key (the flags) stays
    // the same
    Result cached =
        run(
            Map.of("JDK_JAVA_OPTIONS", "-Xlog:aot=info:file=" + log),
            "sql",
            "--format",
            "tsv",
            sql);
    assertThat(cached.out()).isEqualTo(expected);
    assertThat(Files.readString(log))
        .contains("Opened AOT cache " + cache)
        .contains("Using AOT-linked classes: true");
    assertThat(caches()).as("one cache, for the one command run").containsExactly(cache);
    try (Stream<Path> crashes = Stream.concat(Files.list(ROOT), Files.list(Path.of("")))) {
      assertThat(crashes.map(p -> p.getFileName().toString()))
          .noneMatch(name -> name.startsWith("hs_err_pid"));
    }
  }

  private List<Path> caches() throws IOException {
    Path dir = home.resolve("cache").resolve("aot");
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(p -> p.toString().endsWith(".aot")).toList();
    }
  }

  private Path awaitCache(String command) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (System.nanoTime() < deadline) {
      List<Path> made =
          caches().stream()
              .filter(p -> p.getFileName().toString().equals(command + ".aot"))
              .toList();
      if (!made.isEmpty() && !Files.exists(made.get(0).resolveSibling(command + ".lock"))) {
        assertThat(made.get(0).resolveSibling(command + ".aotconf"))
            .as("the recording is removed once assembled")
            .doesNotExist();
        return made.get(0);
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no cache for " + command + " after 120 s under " + home);
  }

  private Result run(Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(ROOT.resolve("llmlat").toString()));
    command.addAll(List.of(args));
    Path out = Files.createTempFile(home, "out", ".txt");
    Path err = Files.createTempFile(home, "err", ".txt");
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
    Map<String, String> environment = builder.environment();
    environment.put("LLMLAT_HOME", home.toString());
    environment
        .keySet()
        .removeAll(
            List.of(
                "LLMLAT_DATA_DIR",
                "LLMLAT_CLICKHOUSE_URL",
                "LLMLAT_JAVA_OPTS",
                "JDK_JAVA_OPTIONS"));
    environment.putAll(new HashMap<>(env));
    Process process = builder.start();
    assertThat(process.waitFor(5, TimeUnit.MINUTES))
        .as("llmlat %s ended", String.join(" ", args))
        .isTrue();
    Result result = new Result(process.exitValue(), Files.readString(out), Files.readString(err));
    assertThat(result.exit()).as("llmlat %s: %s", String.join(" ", args), result.err()).isZero();
    return result;
  }
}
