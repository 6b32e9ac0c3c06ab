package dev.llmlat.services;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * A real single-node KRaft Kafka broker (kafka_2.13 from the build's jars) running as a child JVM
 * with its own data directory, log file and PID file. {@link #start} returns once the broker
 * answers the Admin API; {@link #stop} sends SIGTERM and waits for a clean shutdown, {@link #kill}
 * crashes it. {@link KafkaCluster} runs several as one cluster.
 */
public final class KafkaBroker {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  // Small and quiet: one node on a developer's machine (PLATFORM.md: ~180 MB RSS).
  private static final List<String> JVM_OPTIONS =
      List.of(
          "-Xmx256m",
          "-Xms64m",
          "-XX:+UseSerialGC",
          "-Djava.awt.headless=true",
          "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
          "-Dorg.slf4j.simpleLogger.log.kafka.server.KafkaRaftServer=info",
          "-Dorg.slf4j.simpleLogger.showDateTime=true");

  /**
   * Where the broker keeps its state and which loopback ports it listens on. With {@code
   * saslPlainUsers} (user -> password) it also serves a SASL_PLAINTEXT listener with the PLAIN
   * mechanism for those users, on a port of its own ({@link #saslBootstrapServers()}); the
   * plaintext listener stays for the broker's own traffic.
   */
  public record Config(
      Path dataDir,
      Path logFile,
      Path pidFile,
      int port,
      int controllerPort,
      Map<String, String> saslPlainUsers) {
    public Config {
      if (port < 0 || port > 65535 || controllerPort < 0 || controllerPort > 65535) {
        throw new IllegalArgumentException(
            "Kafka ports must be 0..65535, got " + port + " and " + controllerPort);
      }
      saslPlainUsers = Map.copyOf(saslPlainUsers);
      for (Map.Entry<String, String> user : saslPlainUsers.entrySet()) {
        if (!user.getKey().matches("[A-Za-z0-9_.-]+")
            || user.getValue().contains("\"")
            || user.getValue().contains("\\")) {
          throw new IllegalArgumentException(
              "SASL user names must be [A-Za-z0-9_.-]+ and passwords free of quotes and backslashes");
        }
      }
    }

    public Config(Path dataDir, Path logFile, Path pidFile, int port, int controllerPort) {
      this(dataDir, logFile, pidFile, port, controllerPort, Map.of());
    }

    /** This config with a SASL/PLAIN listener for {@code users} (user -> password). */
    public Config withSaslPlainUsers(Map<String, String> users) {
      return new Config(dataDir, logFile, pidFile, port, controllerPort, users);
    }

    /** The layout under one llmlat home, with the given ports (0: any free ones). */
    public static Config under(Path dataDir, Path logs, Path run, int port, int controllerPort) {
      return new Config(
          dataDir, logs.resolve("kafka.log"), run.resolve("kafka.pid"), port, controllerPort);
    }
  }

  /**
   * A node's place in its KRaft quorum: its id, the voters ({@code id@127.0.0.1:port,...}; null for
   * a node that is its own quorum), the cluster id every node is formatted with, and how many
   * replicas (of which at least {@code minInsyncReplicas} in sync for a write) the cluster's topics
   * get.
   */
  record Quorum(int nodeId, String voters, String clusterId, int replicas, int minInsyncReplicas) {
    static Quorum standalone() {
      return new Quorum(1, null, Uuid.randomUuid().toString(), 1, 1);
    }

    boolean isStandalone() {
      return voters == null;
    }
  }

  private final Config config;
  private final ProcessHandle process;
  private final int port;
  private final int saslPort;

  private KafkaBroker(Config config, ProcessHandle process, int port, int saslPort) {
    this.config = config;
    this.process = process;
    this.port = port;
    this.saslPort = saslPort;
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  /** The SASL_PLAINTEXT listener's address (only when the config names SASL users). */
  public String saslBootstrapServers() {
    if (saslPort <= 0) {
      throw new IllegalStateException("this broker has no SASL listener");
    }
    return "127.0.0.1:" + saslPort;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Where the broker writes its partitions. */
  public Path logDir() {
    return config.dataDir().toAbsolutePath().resolve("log");
  }

  /**
   * Whether the broker died of a full disk: it halts once its one log directory fails (Kafka takes
   * a failed write there for a failed disk). Says so naming that directory; null while it runs or
   * when it died of something else.
   */
  public DiskSpace.Full diskFailure() {
    if (process.isAlive()) {
      return null;
    }
    long free = DiskSpace.usable(logDir());
    String tail = tail();
    // its own log is often on the same full disk and cut short: the free space is the surer sign
    if (free >= DiskSpace.RUNNING_MIN_FREE
        && !tail.contains("No space left on device")
        && !tail.contains("KafkaStorageException")) {
      return null;
    }
    return new DiskSpace.Full(
        logDir(),
        DiskSpace.bytes(free)
            + " free; the Kafka broker (pid "
            + process.pid()
            + ") stopped; see "
            + config.logFile());
  }

  /** Formats the data directory if new, starts the broker and waits until it serves. */
  public static KafkaBroker start(Config config) throws IOException {
    int port = config.port() == 0 ? freePort() : config.port();
    int controllerPort = config.controllerPort() == 0 ? freePort() : config.controllerPort();
    for (int p : new int[] {port, controllerPort}) {
      if (inUse(p)) {
        throw new IllegalStateException(
            "port "
                + p
                + " on 127.0.0.1 is in use: is a broker already running?"
                + " (llmlat services status) Pick others with --kafka-port/--kafka-controller-port");
      }
    }
    KafkaBroker broker = launch(config, port, controllerPort, Quorum.standalone());
    broker.awaitStarted();
    return broker;
  }

  /**
   * Formats the data directory if new and starts the node without waiting for it: the nodes of a
   * quorum answer only once a majority of them runs ({@link KafkaCluster}).
   */
  static KafkaBroker launch(Config config, int port, int controllerPort, Quorum quorum)
      throws IOException {
    int saslPort = config.saslPlainUsers().isEmpty() ? 0 : freePort();
    Path dataDir = config.dataDir().toAbsolutePath();
    Path logDir = dataDir.resolve("log");
    Files.createDirectories(logDir);
    Files.createDirectories(config.logFile().getParent());
    Files.createDirectories(config.pidFile().getParent());
    Path properties = dataDir.resolve("server.properties");
    Files.writeString(
        properties,
        serverProperties(logDir, port, controllerPort, saslPort, config.saslPlainUsers(), quorum),
        StandardCharsets.UTF_8);
    if (saslPort > 0) { // it holds the users' passwords
      Files.setPosixFilePermissions(
          properties, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    }
    if (!Files.exists(logDir.resolve("meta.properties"))) {
      format(properties, config.logFile(), quorum);
    }
    Process process =
        ChildJvm.start(
            JVM_OPTIONS, "kafka.Kafka", List.of(properties.toString()), config.logFile());
    return new KafkaBroker(config, process.toHandle(), port, saslPort);
  }

  /** Waits until the node serves and writes its PID file; kills it if it does not come up. */
  void awaitStarted() throws IOException {
    try {
      awaitReady();
      new PidFile(process.pid(), bootstrapServers()).write(config.pidFile());
    } catch (RuntimeException e) {
      process.destroyForcibly();
      throw e;
    }
  }

  /** The broker a PID file describes, if that process still runs. */
  public static Optional<KafkaBroker> running(Config config) {
    return PidFile.read(config.pidFile())
        .flatMap(
            pf ->
                pf.process()
                    .map(
                        p ->
                            new KafkaBroker(
                                config,
                                p,
                                Integer.parseInt(
                                    pf.address().substring(pf.address().lastIndexOf(':') + 1)),
                                0)));
  }

  /** SIGTERM, then waits up to {@code timeout} for a clean shutdown before killing it. */
  public void stop(Duration timeout) {
    process.destroy();
    try {
      process.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      process.destroyForcibly();
    }
    try {
      Files.deleteIfExists(config.pidFile());
    } catch (IOException ignored) {
      // a stale PID file is detected as not running
    }
  }

  /**
   * SIGKILL, as a crash: no controlled shutdown, no leadership handed over; returns once it is
   * gone.
   */
  public void kill() {
    process.destroyForcibly();
    try {
      process.onExit().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(
          "the Kafka broker (pid " + process.pid() + ") did not exit within 30 s of SIGKILL", e);
    }
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        DiskSpace.Full full = diskFailure();
        if (full != null) {
          throw full;
        }
        throw new IllegalStateException(
            "the Kafka broker exited during start-up; see " + config.logFile() + tail());
      }
      if (inUse(port)) {
        try (Admin admin =
            Admin.create(
                Map.of(
                    AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                    AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000,
                    AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000))) {
          if (!admin.describeCluster().nodes().get(3, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (Exception e) {
          last = e;
        }
      }
      sleep(100);
    }
    throw new IllegalStateException(
        "the Kafka broker did not become ready within "
            + READY_TIMEOUT.toSeconds()
            + " s ("
            + last
            + "); see "
            + config.logFile()
            + tail());
  }

  private String tail() {
    return ChildJvm.tail(config.logFile(), 8);
  }

  private static void format(Path properties, Path logFile, Quorum quorum) throws IOException {
    // a static quorum (controller.quorum.voters) is formatted without naming its controllers here
    List<String> args =
        quorum.isStandalone()
            ? List.of(
                "format", "-t", quorum.clusterId(), "-c", properties.toString(), "--standalone")
            : List.of("format", "-t", quorum.clusterId(), "-c", properties.toString());
    Process format = ChildJvm.start(JVM_OPTIONS, "kafka.tools.StorageTool", args, logFile);
    try {
      if (!format.waitFor(60, TimeUnit.SECONDS) || format.exitValue() != 0) {
        format.destroyForcibly();
        throw new IllegalStateException(
            "formatting the Kafka data directory failed; see " + logFile);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while formatting Kafka storage", e);
    }
  }

  static String serverProperties(
      Path logDir,
      int port,
      int controllerPort,
      int saslPort,
      Map<String, String> saslPlainUsers,
      Quorum quorum) {
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", String.valueOf(quorum.nodeId()));
    if (quorum.isStandalone()) {
      p.put("controller.quorum.bootstrap.servers", "127.0.0.1:" + controllerPort);
    } else {
      p.put("controller.quorum.voters", quorum.voters());
    }
    String sasl = saslPort > 0 ? ",SASL_PLAINTEXT://127.0.0.1:" + saslPort : "";
    p.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + port + sasl + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port + sasl);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put(
        "listener.security.protocol.map",
        "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
            + (saslPort > 0 ? ",SASL_PLAINTEXT:SASL_PLAINTEXT" : ""));
    if (saslPort > 0) {
      // the broker's PLAIN login module checks clients against user_NAME="password" entries
      StringBuilder jaas =
          new StringBuilder("org.apache.kafka.common.security.plain.PlainLoginModule required");
      saslPlainUsers.forEach(
          (user, password) ->
              jaas.append(" user_").append(user).append("=\"").append(password).append('"'));
      p.put("sasl.enabled.mechanisms", "PLAIN");
      p.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas.append(';').toString());
    }
    p.put("log.dirs", logDir.toString());
    p.put("num.partitions", "1");
    String replicas = String.valueOf(quorum.replicas());
    String minInsync = String.valueOf(quorum.minInsyncReplicas());
    p.put("offsets.topic.replication.factor", replicas);
    p.put("offsets.topic.num.partitions", "1");
    p.put("transaction.state.log.replication.factor", replicas);
    p.put("transaction.state.log.min.isr", minInsync);
    p.put("share.coordinator.state.topic.replication.factor", replicas);
    p.put("share.coordinator.state.topic.min.isr", minInsync);
    if (!quorum.isStandalone()) {
      // topics created without a replication factor (Kafka Streams' changelogs and repartition
      // topic) get the cluster's
      p.put("default.replication.factor", replicas);
      p.put("min.insync.replicas", minInsync);
      // a node that died is fenced, and its partitions led by others, after 3 s instead of 9 s
      p.put("broker.session.timeout.ms", "3000");
      p.put("broker.heartbeat.interval.ms", "500");
    }
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("num.network.threads", "1");
    p.put("num.io.threads", "2");
    p.put("auto.create.topics.enable", "false");
    p.put("log.retention.hours", "168");
    StringBuilder text = new StringBuilder("# written by llmlat services; edits are overwritten\n");
    p.stringPropertyNames().stream()
        .sorted()
        .forEach(k -> text.append(k).append('=').append(p.getProperty(k)).append('\n'));
    return text.toString();
  }

  /** A port free on this machine now (for services that must come back on the same one). */
  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  public static boolean inUse(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
