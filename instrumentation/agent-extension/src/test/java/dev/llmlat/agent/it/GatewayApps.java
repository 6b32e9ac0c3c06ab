package dev.llmlat.agent.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The real gateway applications of {@code src/it/gateway-apps} (Spring Cloud Gateway as Spring Boot
 * executable jars, Vert.x 5 as a shaded one, their dependencies from Maven Central): built on first
 * use with the Maven that runs the tests (same local repository, offline when it is), into {@code
 * target/gateway-apps}, and rebuilt only when their sources are newer. Their Spring, Vert.x and
 * Netty versions cannot share the test class path, hence a build of their own.
 */
final class GatewayApps {
  private static final Path SOURCES = Path.of("src/it/gateway-apps").toAbsolutePath();

  private GatewayApps() {}

  /**
   * The executable jar of {@code app} (a module of the gateway-apps build), building them all if
   * needed.
   */
  static synchronized Path jar(String app) throws IOException, InterruptedException {
    Path out = TestDirs.work().getParent().resolve("gateway-apps");
    Path jar = out.resolve(app).resolve(app + ".jar");
    // against a stamp of the last good build, not the jar: Maven leaves an up-to-date jar
    // untouched,
    // so a change to another app (or the aggregator) would otherwise rebuild on every call
    Path stamp = out.resolve("built.stamp");
    if (!Files.isRegularFile(jar)
        || !Files.isRegularFile(stamp)
        || newestSource().compareTo(Files.getLastModifiedTime(stamp)) > 0) {
      Files.deleteIfExists(stamp);
      build(out);
      Files.writeString(stamp, "");
    }
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " was not built; see " + out.resolve("build.log"));
    }
    return jar;
  }

  private static FileTime newestSource() throws IOException {
    try (Stream<Path> files = Files.walk(SOURCES)) {
      return files
          .filter(Files::isRegularFile)
          .filter(f -> !f.toString().contains(File.separator + "target" + File.separator))
          .map(
              f -> {
                try {
                  return Files.getLastModifiedTime(f);
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              })
          .max(FileTime::compareTo)
          .orElseThrow();
    }
  }

  private static void build(Path out) throws IOException, InterruptedException {
    Files.createDirectories(out);
    Path log = out.resolve("build.log");
    List<String> command =
        new ArrayList<>(
            List.of(
                maven(),
                "-B",
                "-q",
                "-f",
                SOURCES.resolve("pom.xml").toString(),
                "-Dgateway.apps.build=" + out,
                "package"));
    String repository = System.getProperty("llmlat.maven.repo.local", "");
    if (!repository.isEmpty() && !repository.startsWith("${")) {
      command.add("-Dmaven.repo.local=" + repository);
    }
    if ("true".equals(System.getProperty("llmlat.maven.offline"))) {
      command.add("-o");
    }
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    // the JDK running the tests builds them (the apps target Java 17)
    builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
    long start = System.nanoTime();
    Process process = builder.start();
    if (!process.waitFor(10, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new IllegalStateException("the gateway apps' build took over 10 minutes; see " + log);
    }
    if (process.exitValue() != 0) {
      throw new IllegalStateException(
          "the gateway apps' build failed ("
              + String.join(" ", command)
              + "):\n"
              + Files.readString(log));
    }
    System.out.printf("gateway apps built in %.1f s%n", (System.nanoTime() - start) / 1e9);
  }

  private static String maven() {
    String home = System.getProperty("llmlat.maven.home", "");
    if (!home.isEmpty() && !home.startsWith("${")) {
      Path mvn = Path.of(home, "bin", "mvn");
      if (Files.isExecutable(mvn)) {
        return mvn.toString();
      }
    }
    return "mvn";
  }
}
