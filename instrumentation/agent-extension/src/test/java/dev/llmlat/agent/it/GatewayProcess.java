package dev.llmlat.agent.it;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A gateway main class run as a child JVM, optionally under the real agent, with a class path of
 * only the gateway's own classes and its server library (no OpenTelemetry, no Kafka): what an
 * unmodified gateway deployment looks like.
 */
public final class GatewayProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("LISTENING (\\d+)");

  /** The gateways' server and client libraries (only the main class in use loads any of them). */
  private static final List<String> SERVER_LIBRARIES =
      List.of(
          "/org/eclipse/jetty/",
          "/org/slf4j/slf4j-api/",
          "/org/slf4j/slf4j-nop/",
          "/io/netty/",
          "/io/projectreactor/",
          "/org/reactivestreams/",
          "/org/apache/tomcat/",
          "/io/vertx/",
          "/com/fasterxml/jackson/core/jackson-core/",
          "/org/apache/httpcomponents/",
          "/io/grpc/",
          "/io/perfmark/",
          "/com/google/guava/");

  private final Process process;
  private final Path log;
  private final int port;
  private final String name;

  private GatewayProcess(Process process, Path log, int port, String name) {
    this.process = process;
    this.log = log;
    this.port = port;
    this.name = name;
  }

  /** JVM flags for the vanilla agent. */
  public static List<String> vanillaAgent(String tracesExporter) {
    return new ArrayList<>(
        List.of(
            "-javaagent:" + TestDirs.agentJar(),
            "-Dotel.service.name=gateway",
            "-Dotel.traces.exporter=" + tracesExporter,
            "-Dotel.metrics.exporter=none",
            "-Dotel.logs.exporter=none",
            "-Dotel.bsp.schedule.delay=100",
            // start-up cost: only what a gateway's checks need (PLATFORM.md)
            "-Dotel.instrumentation.common.default-enabled=false",
            "-Dotel.instrumentation.java-http-server.enabled=true",
            "-Dotel.instrumentation.java-http-client.enabled=true",
            "-Dotel.instrumentation.jetty.enabled=true"));
  }

  /** JVM flags for the agent with this extension and its Kafka exporter. */
  public static List<String> extensionWithKafka(String bootstrapServers, String... extra) {
    List<String> flags = vanillaAgent("kafka");
    flags.add("-Dotel.javaagent.extensions=" + TestDirs.extensionJar());
    flags.add("-Dotel.exporter.kafka.bootstrap.servers=" + bootstrapServers);
    flags.addAll(Arrays.asList(extra));
    return flags;
  }

  public static GatewayProcess start(
      String java, Class<?> mainClass, List<String> jvmFlags, String upstream)
      throws IOException, InterruptedException {
    return start(java, mainClass, jvmFlags, upstream, gatewayClassPath());
  }

  /** With arguments after the upstream URL (as the main class reads them). */
  public static GatewayProcess start(
      String java, Class<?> mainClass, List<String> jvmFlags, List<String> args)
      throws IOException, InterruptedException {
    return start(
        java,
        mainClass.getSimpleName(),
        jvmFlags,
        List.of("-cp", gatewayClassPath(), mainClass.getName()),
        args);
  }

  /**
   * With the gateway's server libraries from a folder of jars instead of the test class path (a
   * version the test class path cannot hold next to its own, e.g. Netty 4.2).
   */
  public static GatewayProcess startWithLibraries(
      String java, Class<?> mainClass, List<String> jvmFlags, String upstream, Path libraries)
      throws IOException, InterruptedException {
    String classPath;
    try (var jars = Files.list(libraries)) {
      classPath =
          testClasses()
              + File.pathSeparator
              + jars.map(Path::toString)
                  .filter(p -> p.endsWith(".jar"))
                  .sorted()
                  .collect(Collectors.joining(File.pathSeparator));
    }
    return start(java, mainClass, jvmFlags, upstream, classPath);
  }

  private static GatewayProcess start(
      String java, Class<?> mainClass, List<String> jvmFlags, String upstream, String classPath)
      throws IOException, InterruptedException {
    return start(
        java,
        mainClass.getSimpleName(),
        jvmFlags,
        List.of("-cp", classPath, mainClass.getName()),
        List.of(upstream));
  }

  /** An executable jar ({@code java -jar}, e.g. a Spring Boot application), named {@code name}. */
  public static GatewayProcess startJar(
      String java, String name, Path jar, List<String> jvmFlags, String upstream)
      throws IOException, InterruptedException {
    return start(java, name, jvmFlags, List.of("-jar", jar.toString()), List.of(upstream));
  }

  /** An executable jar with arguments after the upstream URL. */
  public static GatewayProcess startJar(
      String java, String name, Path jar, List<String> jvmFlags, List<String> args)
      throws IOException, InterruptedException {
    return start(java, name, jvmFlags, List.of("-jar", jar.toString()), args);
  }

  private static GatewayProcess start(
      String java, String name, List<String> jvmFlags, List<String> launch, List<String> args)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile(TestDirs.work(), name + "-", ".log");
    List<String> command = new ArrayList<>();
    command.add(java);
    command.addAll(
        List.of(
            "-Xmx256m",
            "-XX:+UseSerialGC",
            // tests: C1 only starts faster (overhead is measured by `llmlat bench agent`, with C2)
            "-XX:TieredStopAtLevel=1",
            // no Nagle on the JDK server's small SSE writes (else ~40 ms delayed-ACK stalls per
            // request)
            "-Dsun.net.httpserver.nodelay=true"));
    command.addAll(jvmFlags);
    command.addAll(launch);
    command.addAll(args);
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      Matcher m = LISTENING.matcher(Files.readString(log, StandardCharsets.UTF_8));
      if (m.find()) {
        return new GatewayProcess(process, log, Integer.parseInt(m.group(1)), name);
      }
      if (!process.isAlive()) {
        throw new IllegalStateException("gateway exited:\n" + Files.readString(log));
      }
      Thread.sleep(100);
    }
    process.destroyForcibly();
    throw new IllegalStateException(
        "gateway did not listen within 90 s:\n" + Files.readString(log));
  }

  /** The JDK 17 on this machine, to show the extension loads in Java 17 gateways; else ours. */
  public static String java17OrCurrent() {
    for (String home : List.of("/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/openjdk-17")) {
      Path java = Path.of(home, "bin", "java");
      if (Files.isExecutable(java)) {
        return java.toString();
      }
    }
    return currentJava();
  }

  public static String currentJava() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static String testClasses() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> e.endsWith("test-classes"))
        .findFirst()
        .orElseThrow();
  }

  private static String gatewayClassPath() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> e.endsWith("test-classes") || SERVER_LIBRARIES.stream().anyMatch(e::contains))
        .collect(Collectors.joining(File.pathSeparator));
  }

  /** The gateway's main class, simple name. */
  public String name() {
    return name;
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + port;
  }

  public String log() {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(5, TimeUnit.SECONDS);
    }
  }
}
