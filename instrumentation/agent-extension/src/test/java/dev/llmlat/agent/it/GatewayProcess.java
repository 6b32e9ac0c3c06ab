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

  private final Process process;
  private final Path log;
  private final int port;

  private GatewayProcess(Process process, Path log, int port) {
    this.process = process;
    this.log = log;
    this.port = port;
  }

  /** JVM flags for the vanilla agent. */
  public static List<String> vanillaAgent(String tracesExporter) {
    return new ArrayList<>(List.of(
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

  public static GatewayProcess start(String java, Class<?> mainClass, List<String> jvmFlags, String upstream)
      throws IOException, InterruptedException {
    Path log = Files.createTempFile(TestDirs.work(), mainClass.getSimpleName() + "-", ".log");
    List<String> command = new ArrayList<>();
    command.add(java);
    command.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC",
        // tests: C1 only starts faster (overhead is measured by `llmlat bench agent`, with C2)
        "-XX:TieredStopAtLevel=1",
        // no Nagle on the JDK server's small SSE writes (else ~40 ms delayed-ACK stalls per request)
        "-Dsun.net.httpserver.nodelay=true"));
    command.addAll(jvmFlags);
    command.addAll(List.of("-cp", gatewayClassPath(), mainClass.getName(), upstream));
    Process process = new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      Matcher m = LISTENING.matcher(Files.readString(log, StandardCharsets.UTF_8));
      if (m.find()) {
        return new GatewayProcess(process, log, Integer.parseInt(m.group(1)));
      }
      if (!process.isAlive()) {
        throw new IllegalStateException("gateway exited:\n" + Files.readString(log));
      }
      Thread.sleep(100);
    }
    process.destroyForcibly();
    throw new IllegalStateException("gateway did not listen within 90 s:\n" + Files.readString(log));
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

  private static String gatewayClassPath() {
    return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> e.endsWith("test-classes") || e.contains("/org/eclipse/jetty/")
            || e.contains("/org/slf4j/slf4j-api/") || e.contains("/org/slf4j/slf4j-nop/"))
        .collect(Collectors.joining(File.pathSeparator));
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
