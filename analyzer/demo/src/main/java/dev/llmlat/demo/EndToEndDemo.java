package dev.llmlat.demo;

import dev.llmlat.engine.DemoEngine;
import dev.llmlat.engine.EngineConfig;
import dev.llmlat.engine.ExporterKind;
import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Every layer for real, on one machine: the demo engine (continuous batching, step times from the
 * H200 cost model, instrumented with the scheduler SDK, GPU step spans) and an ordinary gateway
 * process under the real OpenTelemetry agent with llmlat's extension, both exporting OTLP to
 * Kafka; a client sends streamed chat completions through the gateway with Poisson arrivals.
 * Returns once every request's spans of all layers are in the store.
 */
public final class EndToEndDemo {
  private static final Duration LANDING_TIMEOUT = Duration.ofSeconds(120);

  /** How much load, how fast the modelled GPU runs (1 = the H200's measured step times). */
  public record Config(int requests, double ratePerSecond, long seed, double timeScale) {
    public Config {
      if (requests < 1 || requests > 1000) {
        throw new IllegalArgumentException("--requests must be 1..1000, got " + requests);
      }
      if (ratePerSecond <= 0 || timeScale <= 0) {
        throw new IllegalArgumentException("--rate and --time-scale must be positive");
      }
    }
  }

  /** One request as the client saw it. */
  public record ClientRequest(String traceId, int promptWords, int maxTokens, long sentNs, long firstChunkNs, long endNs, int chunks) {}

  private EndToEndDemo() {}

  /**
   * The agent and extension jars the build copies next to the distribution: {@code llmlat.agent.dir}
   * when set (the launcher and the tests set it), else {@code agent/} beside the {@code lib/} this
   * jar was loaded from.
   */
  public static Path agentDir() {
    String configured = System.getProperty("llmlat.agent.dir");
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured);
    }
    try {
      Path code = Path.of(EndToEndDemo.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      Path dir = code.getParent(); // target/lib for the distribution's jars
      return (dir.getFileName() != null && dir.getFileName().toString().equals("lib") ? dir.getParent() : dir).resolve("agent");
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  public static List<ClientRequest> run(String bootstrap, KafkaClientProperties kafkaClient, ClickHouseStore store, Path logs,
      Config config, PrintWriter out) throws IOException, InterruptedException {
    Path agent = agentDir().resolve("opentelemetry-javaagent.jar");
    Path extension = agentDir().resolve("llmlat-agent-extension.jar");
    if (!Files.isRegularFile(agent) || !Files.isRegularFile(extension)) {
      throw new IllegalStateException("the OpenTelemetry agent or llmlat's extension is missing in " + agentDir()
          + " (built by `mvn package`; ./llmlat builds it)");
    }
    // Streaming servers need TCP_NODELAY: with Nagle on, each small SSE chunk after the first waits
    // for the peer's delayed ACK (tens of ms), which the attribution shows as network time.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    EngineConfig engineConfig = EngineConfig.builder().host("127.0.0.1").port(0).model("tinylm-1b").serviceName("llm-engine")
        .maxBatch(8).timeScale(config.timeScale()).exporter(ExporterKind.KAFKA).kafkaBootstrap(bootstrap)
        .kafkaProperties(kafkaClient.values()).build();
    try (DemoEngine engine = DemoEngine.start(engineConfig)) {
      out.printf("engine: %s (continuous batching, H200 step-time model x%.2f), spans to Kafka%n", engine.baseUri(), config.timeScale());
      Path gatewayLog = logs.resolve("demo-gateway.log");
      Files.deleteIfExists(gatewayLog);
      List<String> gatewayFlags = new java.util.ArrayList<>(List.of("-Xmx256m", "-XX:+UseSerialGC", "-Dsun.net.httpserver.nodelay=true", "-javaagent:" + agent,
          "-Dotel.javaagent.extensions=" + extension, "-Dotel.service.name=llm-gateway", "-Dotel.traces.exporter=kafka",
          "-Dotel.exporter.kafka.bootstrap.servers=" + bootstrap, "-Dotel.metrics.exporter=none", "-Dotel.logs.exporter=none",
          "-Dotel.instrumentation.common.default-enabled=false", "-Dotel.instrumentation.java-http-server.enabled=true",
          "-Dotel.instrumentation.java-http-client.enabled=true", "-Dotel.bsp.schedule.delay=200",
          "-Dotel.javaagent.logging=application"));
      if (kafkaClient.source() != null) { // the file's path, not its secrets, on the gateway's command line
        gatewayFlags.add("-Dotel.exporter.kafka.config.file=" + kafkaClient.source().toAbsolutePath());
      }
      Process gateway = ChildJvm.start(gatewayFlags, DemoGateway.class.getName(), List.of(engine.baseUri().toString().replaceAll("/$", "")),
          gatewayLog);
      try {
        int port = Integer.parseInt(ChildJvm.awaitLine(gateway, gatewayLog, "LISTENING ", Duration.ofSeconds(90)));
        out.printf("gateway: http://127.0.0.1:%d (JDK HttpServer relay under the OpenTelemetry agent %s + llmlat extension)%n", port,
            "2.31.1");
        out.flush();
        List<ClientRequest> sent = sendLoad(port, config);
        out.printf("client: %d streamed chat completions, Poisson arrivals at %.1f/s%n", sent.size(), config.ratePerSecond());
        engine.flushSpans(Duration.ofSeconds(10));
        awaitLanding(store, sent);
        return sent;
      } finally {
        gateway.destroy(); // SIGTERM: the agent flushes its spans on shutdown
        gateway.waitFor();
      }
    }
  }

  private static List<ClientRequest> sendLoad(int port, Config config) throws InterruptedException {
    Random random = new Random(config.seed());
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    ExecutorService pool = Executors.newCachedThreadPool();
    List<Future<ClientRequest>> futures = new ArrayList<>();
    long next = System.nanoTime();
    for (int i = 0; i < config.requests(); i++) {
      byte[] trace = new byte[16];
      byte[] span = new byte[8];
      random.nextBytes(trace);
      random.nextBytes(span);
      span[0] |= 1;
      String traceId = HexFormat.of().formatHex(trace);
      // prompt lengths like the H200 capture's: mostly short, some long
      int words = random.nextInt(10) < 7 ? 16 + random.nextInt(200) : 500 + random.nextInt(2500);
      int maxTokens = 8 + random.nextInt(24);
      String body = "{\"model\":\"tinylm-1b\",\"stream\":true,\"max_tokens\":" + maxTokens
          + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + "lorem ".repeat(words).strip() + "\"}]}";
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
          .header("Content-Type", "application/json")
          .header("traceparent", "00-" + traceId + "-" + HexFormat.of().formatHex(span) + "-01")
          .timeout(Duration.ofSeconds(120))
          .POST(HttpRequest.BodyPublishers.ofString(body)).build();
      long wait = next - System.nanoTime();
      if (wait > 0) {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      }
      futures.add(pool.submit(() -> stream(client, request, traceId, words, maxTokens)));
      next += (long) (-Math.log(1 - random.nextDouble()) / config.ratePerSecond() * 1e9);
    }
    List<ClientRequest> sent = new ArrayList<>();
    for (Future<ClientRequest> f : futures) {
      try {
        sent.add(f.get());
      } catch (java.util.concurrent.ExecutionException e) {
        throw new IllegalStateException("a demo request failed: " + e.getCause(), e.getCause());
      }
    }
    pool.shutdown();
    return sent;
  }

  private static ClientRequest stream(HttpClient client, HttpRequest request, String traceId, int words, int maxTokens)
      throws IOException, InterruptedException {
    long sent = System.currentTimeMillis() * 1_000_000L;
    long t0 = System.nanoTime();
    HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
    if (response.statusCode() != 200) {
      throw new IOException("gateway answered " + response.statusCode() + " for " + traceId);
    }
    long first = 0;
    int chunks = 0;
    try (InputStream in = response.body()) {
      StringBuilder line = new StringBuilder();
      for (int c; (c = in.read()) >= 0; ) {
        if (c != '\n') {
          line.append((char) c);
          continue;
        }
        if (line.toString().startsWith("data: ") && !line.toString().equals("data: [DONE]")) {
          chunks++;
          if (first == 0) {
            first = sent + (System.nanoTime() - t0);
          }
        }
        line.setLength(0);
      }
    }
    return new ClientRequest(traceId, words, maxTokens, sent, first, sent + (System.nanoTime() - t0), chunks);
  }

  private static void awaitLanding(ClickHouseStore store, List<ClientRequest> sent) throws InterruptedException {
    String ids = dev.llmlat.analyze.store.TraceReader.sqlList(sent.stream().map(ClientRequest::traceId).toList());
    String sql = "SELECT countIf(SpanName = 'llm_request'), countIf(ResourceAttributes['llmlat.layer'] = 'gateway' AND SpanKind = 'Server'),"
        + " countIf(ResourceAttributes['llmlat.layer'] = 'gpu'), count() FROM otel_traces WHERE TraceId IN " + ids;
    long deadline = System.nanoTime() + LANDING_TIMEOUT.toNanos();
    String last = "";
    long stableSince = 0;
    while (System.nanoTime() < deadline) {
      List<String> row = store.query(sql).rows().get(0);
      boolean complete = Long.parseLong(row.get(0)) == sent.size() && Long.parseLong(row.get(1)) == sent.size()
          && Long.parseLong(row.get(2)) > 0;
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
    throw new IllegalStateException("not every layer's spans landed within " + LANDING_TIMEOUT.toSeconds()
        + " s (requests, gateway spans, GPU spans, all spans: " + last + ")");
  }
}
