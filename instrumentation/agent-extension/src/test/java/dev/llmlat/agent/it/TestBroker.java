package dev.llmlat.agent.it;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * A real single-node KRaft broker ({@code kafka.Kafka} 4.4.0 from the test class path) as a child
 * JVM, on fixed loopback ports so it can be stopped and started again at the same address (the
 * approach of the analyzer's {@code KafkaBroker}). One per test JVM, stopped at exit.
 */
public final class TestBroker {
  public static final String TOPIC = "otlp_spans";
  private static TestBroker shared;

  private final Path dir;
  private final int port;
  private final int controllerPort;
  private Process process;

  private TestBroker(Path dir, int port, int controllerPort) {
    this.dir = dir;
    this.port = port;
    this.controllerPort = controllerPort;
  }

  /** The JVM's broker: ports chosen and storage formatted, not necessarily running. */
  public static synchronized TestBroker shared() throws IOException {
    if (shared == null) {
      Path dir = Files.createTempDirectory(TestDirs.work(), "kafka-");
      shared = new TestBroker(dir, freePort(), freePort());
      shared.format();
      Runtime.getRuntime().addShutdownHook(new Thread(shared::stop));
    }
    return shared;
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  public synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** Starts the broker if it is not running, waits until it serves, and creates the topic. */
  public synchronized void ensureRunning() throws Exception {
    if (isRunning()) {
      return;
    }
    process =
        new ProcessBuilder(java("kafka.Kafka", dir.resolve("server.properties").toString()))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("broker.log").toFile()))
            .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    Exception last = null;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("broker exited; see " + dir.resolve("broker.log"));
      }
      if (inUse(port)) {
        try (Admin admin = admin()) {
          Set<String> topics = admin.listTopics().names().get(5, TimeUnit.SECONDS);
          if (!topics.contains(TOPIC)) {
            admin
                .createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1)))
                .all()
                .get(10, TimeUnit.SECONDS);
          }
          return;
        } catch (Exception e) {
          last = e;
        }
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("broker not ready in 60 s: " + last);
  }

  /** Stops the broker (SIGTERM, then kill) and waits until its port is closed. */
  public synchronized void stop() {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  public Admin admin() {
    return Admin.create(
        Map.of(
            AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
            AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000));
  }

  private void format() throws IOException {
    Path logDir = dir.resolve("log");
    Files.createDirectories(logDir);
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
    p.put(
        "listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("log.dirs", logDir.toString());
    p.put("num.partitions", "1");
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "1");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("share.coordinator.state.topic.replication.factor", "1");
    p.put("share.coordinator.state.topic.min.isr", "1");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("num.network.threads", "1");
    p.put("num.io.threads", "2");
    p.put("auto.create.topics.enable", "false");
    p.put(
        "log.cleaner.dedupe.buffer.size",
        String.valueOf(8 << 20)); // the 128 MiB default overflows a small heap
    Path properties = dir.resolve("server.properties");
    try (var out = Files.newOutputStream(properties)) {
      p.store(out, "llmlat agent-extension tests");
    }
    Process format =
        new ProcessBuilder(
                java(
                    "kafka.tools.StorageTool",
                    "format",
                    "-t",
                    org.apache.kafka.common.Uuid.randomUuid().toString(),
                    "-c",
                    properties.toString(),
                    "--standalone"))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("broker.log").toFile()))
            .start();
    try {
      if (!format.waitFor(60, TimeUnit.SECONDS) || format.exitValue() != 0) {
        throw new IllegalStateException(
            "formatting Kafka storage failed; see " + dir.resolve("broker.log"));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  private static List<String> java(String mainClass, String... args) {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx192m",
                "-Xms64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Djava.awt.headless=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                brokerClassPath(),
                mainClass));
    command.addAll(List.of(args));
    return command;
  }

  /**
   * The test class path, logging through slf4j-simple (the extension's slf4j-nop would hide a fatal
   * error).
   */
  private static String brokerClassPath() {
    return java.util.Arrays.stream(
            System.getProperty("java.class.path").split(java.io.File.pathSeparator))
        .filter(e -> !e.contains("slf4j-nop"))
        .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator));
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  static boolean inUse(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
