package dev.llmlat.demo;

import dev.llmlat.engine.DemoEngine;
import dev.llmlat.engine.EngineConfig;
import dev.llmlat.engine.ExporterKind;
import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.LoadResult;
import dev.llmlat.load.LoadRun;
import dev.llmlat.load.LoadShape;
import dev.llmlat.load.Prompt;
import dev.llmlat.load.PromptSource;
import dev.llmlat.load.RequestOutcome;
import dev.llmlat.load.SpanShipper;
import dev.llmlat.load.Target;
import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Every layer for real, on one machine: the demo engine (continuous batching, step times from the
 * H200 cost model, instrumented with the scheduler SDK, GPU step spans) and an ordinary gateway
 * process under the real OpenTelemetry agent with llmlat's extension, both exporting OTLP to Kafka;
 * a client sends streamed chat completions through the gateway with Poisson arrivals. Returns once
 * every request's spans of all layers are in the store.
 */
public final class EndToEndDemo {
  private static final Duration LANDING_TIMEOUT = Duration.ofSeconds(120);

  /** How much load, how fast the modelled GPU runs (1 = the H200's measured step times). */
  public record Config(
      int requests, double ratePerSecond, long seed, double timeScale, int gatewayPool) {
    public Config {
      if (requests < 1 || requests > 1000) {
        throw new IllegalArgumentException("--requests must be 1..1000, got " + requests);
      }
      if (gatewayPool < 1 || gatewayPool > 1000) {
        throw new IllegalArgumentException(
            "--gateway-pool must be 1..1000 connections, got " + gatewayPool);
      }
      if (ratePerSecond <= 0 || timeScale <= 0) {
        throw new IllegalArgumentException("--rate and --time-scale must be positive");
      }
    }
  }

  /**
   * One request as the client saw it: its TTFT (to the first content chunk) and end-to-end latency.
   */
  public record ClientRequest(
      String traceId, int promptTokens, int maxTokens, long ttftNs, long latencyNs, int chunks) {}

  private static final String MODEL = "tinylm-1b";

  private EndToEndDemo() {}

  /**
   * The agent and extension jars the build copies next to the distribution: {@code
   * llmlat.agent.dir} when set (the launcher and the tests set it), else {@code agent/} beside the
   * {@code lib/} this jar was loaded from.
   */
  public static Path agentDir() {
    String configured = System.getProperty("llmlat.agent.dir");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    try {
      Path code =
          Path.of(EndToEndDemo.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      Path dir = code.getParent(); // target/lib for the distribution's jars
      return (dir.getFileName() != null && dir.getFileName().toString().equals("lib")
              ? dir.getParent()
              : dir)
          .resolve("agent");
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  public static List<ClientRequest> run(
      String bootstrap,
      KafkaClientProperties kafkaClient,
      ClickHouseStore store,
      Path logs,
      Config config,
      PrintWriter out)
      throws IOException, InterruptedException {
    Path agent = agentDir().resolve("opentelemetry-javaagent.jar");
    Path extension = agentDir().resolve("llmlat-agent-extension.jar");
    if (!Files.isRegularFile(agent) || !Files.isRegularFile(extension)) {
      throw new IllegalStateException(
          "the OpenTelemetry agent or llmlat's extension is missing in "
              + agentDir()
              + " (built by `mvn package`; ./llmlat builds it)");
    }
    // Streaming servers need TCP_NODELAY: with Nagle on, each small SSE chunk after the first waits
    // for the peer's delayed ACK (tens of ms), which the attribution shows as network time.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    EngineConfig engineConfig =
        EngineConfig.builder()
            .host("127.0.0.1")
            .port(0)
            .model(MODEL)
            .serviceName("llm-engine")
            .maxNumSeqs(8)
            .timeScale(config.timeScale())
            .exporter(ExporterKind.KAFKA)
            .kafkaBootstrap(bootstrap)
            .kafkaProperties(kafkaClient.values())
            .build();
    try (DemoEngine engine = DemoEngine.start(engineConfig)) {
      out.printf(
          "engine: %s (continuous batching, H200 step-time model x%.2f), spans to Kafka%n",
          engine.baseUri(), config.timeScale());
      Path gatewayLog = logs.resolve("demo-gateway.log");
      Files.deleteIfExists(gatewayLog);
      List<String> gatewayFlags =
          new java.util.ArrayList<>(
              List.of(
                  "-Xmx256m",
                  "-XX:+UseSerialGC",
                  "-Dsun.net.httpserver.nodelay=true",
                  "-javaagent:" + agent,
                  "-Dotel.javaagent.extensions=" + extension,
                  "-Dotel.service.name=llm-gateway",
                  "-Dotel.traces.exporter=kafka",
                  "-Dotel.exporter.kafka.bootstrap.servers=" + bootstrap,
                  "-Dotel.metrics.exporter=none",
                  "-Dotel.logs.exporter=none",
                  "-Dotel.instrumentation.common.default-enabled=false",
                  "-Dotel.instrumentation.java-http-server.enabled=true",
                  "-Dotel.instrumentation.apache-httpclient.enabled=true",
                  "-Dotel.instrumentation.llmlat.tenant.source=header",
                  "-Dotel.bsp.schedule.delay=200",
                  "-Dotel.javaagent.logging=application"));
      if (kafkaClient.source()
          != null) { // the file's path, not its secrets, on the gateway's command line
        gatewayFlags.add(
            "-Dotel.exporter.kafka.config.file=" + kafkaClient.source().toAbsolutePath());
      }
      Process gateway =
          ChildJvm.start(
              gatewayFlags,
              DemoGateway.class.getName(),
              List.of(
                  engine.baseUri().toString().replaceAll("/$", ""),
                  Integer.toString(config.gatewayPool())),
              gatewayLog);
      try {
        int port =
            Integer.parseInt(
                ChildJvm.awaitLine(gateway, gatewayLog, "LISTENING ", Duration.ofSeconds(90)));
        out.printf(
            "gateway: http://127.0.0.1:%d (JDK HttpServer relay, Apache HttpClient 5 with %d pooled connection%s, under the"
                + " OpenTelemetry agent %s + llmlat extension)%n",
            port, config.gatewayPool(), config.gatewayPool() == 1 ? "" : "s", "2.31.1");
        out.flush();
        List<ClientRequest> sent = sendLoad(port, bootstrap, kafkaClient, config);
        out.printf(
            "client: llmlat load, %d streamed chat completions with trace context, Poisson arrivals at %.1f/s%n",
            sent.size(), config.ratePerSecond());
        engine.flushSpans(Duration.ofSeconds(10));
        awaitLanding(store, sent);
        return sent;
      } finally {
        gateway.destroy(); // SIGTERM: the agent flushes its spans on shutdown
        // an interrupt (the disk watch stopping the run) must not leave the gateway behind
        boolean interrupted = Thread.interrupted();
        if (!gateway.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
          gateway.destroyForcibly();
        }
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * The demo's client is llmlat load: Poisson arrivals, every request with its own traceparent and
   * a client-layer span to Kafka, so the attribution starts where the user's TTFT starts. Two
   * tenants send at once: "chat" (two thirds of the requests, short prompts) and "batch" (long
   * prompts), so the report can say whose prefills the chat requests waited behind.
   */
  private static List<ClientRequest> sendLoad(
      int port, String bootstrap, KafkaClientProperties kafkaClient, Config config)
      throws InterruptedException {
    int batchRequests = config.requests() / 3;
    int chatRequests = config.requests() - batchRequests;
    List<LoadResult> results = new ArrayList<>();
    try (SpanPublisher publisher =
            new SpanPublisher(bootstrap, LlmlatTopics.SPANS, null, kafkaClient);
        SpanShipper spans = new SpanShipper(publisher::publish)) {
      List<LoadRun> runs = new ArrayList<>();
      runs.add(
          LoadRun.start(
              tenantLoad(port, config, CHAT, chatRequests, config.seed()),
              new DemoPrompts(config.seed(), false),
              spans,
              LoadRun.Listener.NONE));
      if (batchRequests > 0) {
        runs.add(
            LoadRun.start(
                tenantLoad(port, config, BATCH, batchRequests, config.seed() + 1),
                new DemoPrompts(config.seed() + 1, true),
                spans,
                LoadRun.Listener.NONE));
      }
      for (LoadRun run : runs) {
        results.add(run.await());
      }
    }
    List<ClientRequest> sent = new ArrayList<>();
    for (LoadResult result : results) {
      for (RequestOutcome r : result.outcomes()) {
        if (!r.success()) {
          throw new IllegalStateException("a demo request failed: " + r);
        }
        sent.add(
            new ClientRequest(
                r.traceId(),
                r.inputTokens(),
                r.maxTokens(),
                r.ttftNanos(),
                r.latencyNanos(),
                r.chunks()));
      }
    }
    return sent;
  }

  /** The demo's two tenants. */
  public static final String CHAT = "chat";

  public static final String BATCH = "batch";

  /** One tenant's share of the load: its requests at its share of the rate. */
  private static LoadConfig tenantLoad(
      int port, Config config, String tenant, int requests, long seed) {
    double rate = config.ratePerSecond() * requests / config.requests();
    return LoadConfig.builder(
            Target.parse("http://127.0.0.1:" + port + "/v1/chat/completions", null), MODEL)
        .shape(new LoadShape.Poisson(rate, seed))
        .requests(requests)
        .timeout(Duration.ofSeconds(120))
        .serviceName("llmlat-load")
        .tenant(tenant)
        .build();
  }

  /**
   * Prompt lengths like the H200 capture's: a chat tenant's short ones, a batch tenant's long ones.
   */
  private static final class DemoPrompts implements PromptSource {
    private final Random random;
    private final boolean longPrompts;

    DemoPrompts(long seed, boolean longPrompts) {
      this.random = new Random(seed);
      this.longPrompts = longPrompts;
    }

    @Override
    public Prompt next() {
      int words = longPrompts ? 1500 + random.nextInt(1500) : 16 + random.nextInt(200);
      String text = "lorem ".repeat(words).strip();
      return new Prompt(text, words, 8 + random.nextInt(24));
    }

    @Override
    public String description() {
      return longPrompts
          ? "the demo's batch tenant (1500-2999 words)"
          : "the demo's chat tenant (16-215 words)";
    }
  }

  private static void awaitLanding(ClickHouseStore store, List<ClientRequest> sent)
      throws InterruptedException {
    String ids =
        dev.llmlat.analyze.store.TraceReader.sqlList(
            sent.stream().map(ClientRequest::traceId).toList());
    String sql =
        "SELECT countIf(SpanName = 'llm_request'), countIf(ResourceAttributes['llmlat.layer'] = 'gateway' AND SpanKind = 'Server'),"
            + " countIf(ResourceAttributes['llmlat.layer'] = 'gpu'), countIf(ResourceAttributes['llmlat.layer'] = 'client'), count()"
            + " FROM otel_traces WHERE TraceId IN "
            + ids;
    long deadline = System.nanoTime() + LANDING_TIMEOUT.toNanos();
    String last = "";
    long stableSince = 0;
    while (System.nanoTime() < deadline) {
      List<String> row = store.query(sql).rows().get(0);
      boolean complete =
          Long.parseLong(row.get(0)) == sent.size()
              && Long.parseLong(row.get(1)) == sent.size()
              && Long.parseLong(row.get(2)) > 0
              && Long.parseLong(row.get(3)) == sent.size();
      String now = String.join(",", row);
      if (complete && now.equals(last)) {
        if (System.nanoTime() - stableSince > 1_500_000_000L) {
          return; // every layer landed and nothing more is arriving
        }
      } else {
        stableSince = System.nanoTime();
      }
      last = now;
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "not every layer's spans landed within "
            + LANDING_TIMEOUT.toSeconds()
            + " s (requests, gateway spans, GPU spans, client spans, all spans: "
            + last
            + ")");
  }
}
