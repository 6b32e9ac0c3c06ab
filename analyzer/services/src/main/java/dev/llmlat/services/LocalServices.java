package dev.llmlat.services;

import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.runtime.home.StorePassword;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.StoreConfig;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;

/**
 * The services of one llmlat home, each a process of its own with a PID file and a log: the Kafka
 * broker, the store (the embedded engine behind ClickHouse's HTTP interface), the ingester and the
 * live attributor.
 */
public final class LocalServices {
  public static final String KAFKA = "kafka";
  public static final String STORE = "store";
  public static final String INGEST = "ingest";
  public static final String ATTRIBUTE = "attribute";
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
  private static final List<String> SERVICE_JVM =
      List.of("--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-XX:+UseSerialGC");

  /**
   * What to start: ports, partitions, an external cluster instead of our broker, the live
   * attributor or not.
   */
  public record Options(
      int kafkaPort,
      int kafkaControllerPort,
      int storePort,
      int partitions,
      String externalKafka,
      KafkaClientProperties kafkaClient,
      boolean live) {
    public Options {
      java.util.Objects.requireNonNull(kafkaClient, "kafkaClient");
      if (partitions < 1 || partitions > 1000) {
        throw new IllegalArgumentException("--partitions must be 1..1000, got " + partitions);
      }
    }

    /** With the live attributor. */
    public Options(
        int kafkaPort,
        int kafkaControllerPort,
        int storePort,
        int partitions,
        String externalKafka,
        KafkaClientProperties kafkaClient) {
      this(kafkaPort, kafkaControllerPort, storePort, partitions, externalKafka, kafkaClient, true);
    }
  }

  /** One line of {@code services status}. */
  public record Status(String service, String state, long pid, String address, Path log) {}

  private final LlmlatHome home;
  private final String cliMain;

  /**
   * The services of {@code home}; {@code cliMain} is the main class of the llmlat command line,
   * which the store, the ingester and the live attributor run as (this module does not depend on
   * the CLI).
   */
  public LocalServices(LlmlatHome home, String cliMain) {
    this.home = home;
    this.cliMain = java.util.Objects.requireNonNull(cliMain, "cliMain");
  }

  public Path pidFile(String service) {
    return home.run().resolve(service + ".pid");
  }

  public Path log(String service) {
    return home.logs().resolve(service + ".log");
  }

  /** The running store's URL, if its process runs. */
  public Optional<String> storeUrl() {
    return PidFile.read(pidFile(STORE)).map(PidFile::address);
  }

  /** The store's password file: the store makes it at its first start; its clients read it. */
  public Path storePasswordFile() {
    return home.storePassword();
  }

  /**
   * How to reach the running store (user default and the store's password), if its process runs. A
   * store started without a password takes any.
   */
  public Optional<StoreConfig> storeConfig() {
    Optional<String> url = storeUrl();
    if (url.isEmpty()) {
      return Optional.empty();
    }
    String password;
    try {
      password = StorePassword.read(storePasswordFile()).orElse(null);
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot read the store's password file " + storePasswordFile() + ": " + e.getMessage(),
          e);
    }
    return Optional.of(StoreConfig.server(url.get(), "default", password));
  }

  /** The running broker's bootstrap address, if its process runs. */
  public Optional<String> kafkaBootstrap() {
    return PidFile.read(pidFile(KAFKA)).map(PidFile::address);
  }

  private KafkaBroker.Config brokerConfig(Options options) {
    return KafkaBroker.Config.under(
        home.kafkaData(),
        home.logs(),
        home.run(),
        options.kafkaPort(),
        options.kafkaControllerPort());
  }

  /** Starts whatever is not running yet; returns what runs afterwards. */
  public List<Status> up(Options options) throws IOException, InterruptedException {
    String bootstrap = options.externalKafka();
    if (bootstrap == null) {
      Optional<String> running = kafkaBootstrap();
      bootstrap =
          running.isPresent()
              ? running.get()
              : KafkaBroker.start(brokerConfig(options)).bootstrapServers();
    }
    try (Admin admin = options.kafkaClient().admin(bootstrap)) {
      SpanTopics.ensure(admin, LlmlatTopics.SPANS, options.partitions());
    }
    String storeUrl = storeUrl().orElse(null);
    if (storeUrl == null) {
      storeUrl = startStore(options.storePort());
    }
    startClient(INGEST, "the ingester", List.of("ingest"), bootstrap, storeUrl, options);
    if (options.live()) {
      startClient(
          ATTRIBUTE,
          "the live attributor",
          List.of("attribute", "--live"),
          bootstrap,
          storeUrl,
          options);
    }
    return status();
  }

  /**
   * Starts a service that reads Kafka and writes the store ({@code command} and where both are),
   * unless it runs.
   */
  private void startClient(
      String service,
      String what,
      List<String> command,
      String bootstrap,
      String storeUrl,
      Options options)
      throws IOException, InterruptedException {
    if (PidFile.read(pidFile(service)).isPresent()) {
      return;
    }
    List<String> args = new ArrayList<>(command);
    args.addAll(List.of("--kafka", bootstrap, "--clickhouse-url", storeUrl));
    if (Files.exists(
        storePasswordFile())) { // the file's path, never the password, on the command line (ps
      // shows it)
      args.addAll(List.of("--clickhouse-password-file", storePasswordFile().toString()));
    }
    if (options.kafkaClient().source()
        != null) { // the file's path, never its content, on the command line
      args.addAll(
          List.of("--kafka-config", options.kafkaClient().source().toAbsolutePath().toString()));
    }
    Process process = startCli(cliMain, args, log(service));
    new PidFile(process.pid(), bootstrap + " -> " + storeUrl).write(pidFile(service));
    Thread.sleep(300);
    if (!process.isAlive()) {
      throw new IllegalStateException(
          what + " exited at start; see " + log(service) + ChildJvm.tail(log(service), 8));
    }
  }

  private String startStore(int port) throws IOException, InterruptedException {
    if (KafkaBroker.inUse(port)) {
      throw new IllegalStateException(
          "port " + port + " on 127.0.0.1 is in use; pick another with --store-port");
    }
    StorePassword.readOrCreate(
        storePasswordFile()); // before the store starts, so its clients find it at once
    Process store =
        startStore(cliMain, home.clickhouseData(), port, log(STORE), storePasswordFile());
    String url = "http://127.0.0.1:" + port;
    new PidFile(store.pid(), url).write(pidFile(STORE));
    return url;
  }

  /**
   * Starts the llmlat CLI ({@code cliMain}) with {@code args} as a service JVM logging to {@code
   * log}.
   */
  public static Process startCli(String cliMain, List<String> args, Path log) throws IOException {
    return ChildJvm.start(SERVICE_JVM, cliMain, args, log);
  }

  /**
   * Starts {@code llmlat store serve} over {@code dataDir} on 127.0.0.1:{@code port} without a
   * password (loopback only): for test rigs whose clients know no password.
   */
  public static Process startStore(String cliMain, Path dataDir, int port, Path log)
      throws IOException, InterruptedException {
    return startStore(cliMain, dataDir, port, log, null);
  }

  /**
   * Starts {@code llmlat store serve} over {@code dataDir} on 127.0.0.1:{@code port}, requiring the
   * password in {@code passwordFile} (null: none), and returns once it answers {@code /ping}; fails
   * naming the log when it exits or does not answer in 60 s.
   */
  public static Process startStore(
      String cliMain, Path dataDir, int port, Path log, Path passwordFile)
      throws IOException, InterruptedException {
    List<String> args =
        new ArrayList<>(
            List.of(
                "store",
                "serve",
                "--port",
                Integer.toString(port),
                "--data-dir",
                dataDir.toString()));
    if (passwordFile == null) {
      args.add("--no-auth");
    } else {
      args.addAll(List.of("--password-file", passwordFile.toString()));
    }
    Process store = startCli(cliMain, args, log);
    String url = "http://127.0.0.1:" + port;
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      if (!store.isAlive()) {
        throw new IllegalStateException(
            "the store exited at start; see " + log + ChildJvm.tail(log, 8));
      }
      try {
        HttpResponse<String> ping =
            http.send(
                HttpRequest.newBuilder(URI.create(url + "/ping")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (ping.statusCode() == 200) {
          return store;
        }
      } catch (IOException notYet) {
        // still starting
      }
      Thread.sleep(100);
    }
    store.destroyForcibly();
    throw new IllegalStateException(
        "the store did not answer " + url + "/ping within 60 s; see " + log);
  }

  /**
   * Stops the ingester (it writes and commits what it holds) and the live attributor (it commits
   * its state), then the store, then the broker.
   */
  public List<String> down() throws IOException {
    List<String> stopped = new ArrayList<>();
    for (String service : List.of(INGEST, ATTRIBUTE, STORE, KAFKA)) {
      Optional<PidFile> pf = PidFile.read(pidFile(service));
      if (pf.isPresent()) {
        ProcessHandle p = pf.get().process().orElse(null);
        if (p != null) {
          p.destroy();
          try {
            p.onExit().get(STOP_TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
          } catch (Exception e) {
            p.destroyForcibly();
          }
          stopped.add(service + " (pid " + pf.get().pid() + ")");
        }
      }
      Files.deleteIfExists(pidFile(service));
    }
    return stopped;
  }

  public List<Status> status() {
    List<Status> result = new ArrayList<>();
    for (String service : List.of(KAFKA, STORE, INGEST, ATTRIBUTE)) {
      Optional<PidFile> pf = PidFile.read(pidFile(service));
      result.add(
          pf.map(p -> new Status(service, "running", p.pid(), p.address(), log(service)))
              .orElse(
                  new Status(
                      service,
                      Files.exists(pidFile(service)) ? "dead (stale pid file)" : "stopped",
                      0,
                      "",
                      log(service))));
    }
    return result;
  }
}
