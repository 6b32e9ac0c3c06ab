package dev.llmlat.bench;

import com.sun.net.httpserver.HttpServer;
import dev.llmlat.demo.DemoGateway;
import dev.llmlat.demo.EndToEndDemo;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.stats.Quantiles;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * The gateway's request latency (full streamed response, as a client reads it) and throughput with
 * no agent, the vanilla OpenTelemetry agent exporting nothing, the vanilla agent with its default
 * OTLP exporter delivering to a live OTLP/HTTP receiver, the agent with llmlat's extension
 * exporting to a live Kafka broker, the same with the broker down, and the extension's hooks with
 * no exporter. All gateways run at once and are measured in interleaved rounds, so machine noise
 * hits them alike; medians over rounds, and the extension's overhead as the median of per-round
 * paired ratios. Each round starts one mode later than the last, and each batch is followed by a
 * pause in which its spans are exported, so a gateway's export is charged to its own batches and to
 * no other gateway's.
 *
 * <p>The like-for-like baseline for the extension is the vanilla agent that exports (its default,
 * OTLP): both then pay for encoding and shipping spans; what remains is the extension's hooks and
 * its Kafka exporter against the stock exporter.
 *
 * <p>Measured on a 2-core VM: with a warm-up of a few thousand requests C2 was still compiling
 * through the rounds (more so in the modes that load the Kafka client), and that, not the request
 * path, made most of the differences; after 30,000 requests the gateways ran 2-4x faster and the
 * modes' figures drew together. Hence the long default warm-up, and JIT time printed apart.
 */
public final class AgentBenchmark {
  /** The agents' batch span processor delay (see where the gateways start). */
  private static final long BSP_DELAY_MS = 200;

  /** A pause after each batch: two export periods and the delivery of the last one. */
  private static final long DRAIN_MS = 2 * BSP_DELAY_MS + 100;

  public static final String NO_AGENT = "no agent";
  public static final String VANILLA = "vanilla agent";
  public static final String VANILLA_OTLP = "vanilla agent+otlp";
  public static final String EXTENSION_KAFKA = "agent+extension+kafka";
  public static final String EXTENSION_KAFKA_DOWN = "agent+extension, kafka down";
  public static final String EXTENSION_NO_EXPORT = "agent+extension, no export";

  /**
   * The same gateway relay on Reactor Netty (server and client: what Spring WebFlux and Spring
   * Cloud Gateway run on).
   */
  public static final String REACTOR_VANILLA_OTLP = "reactor-netty vanilla agent+otlp";

  public static final String REACTOR_EXTENSION_KAFKA = "reactor-netty agent+extension+kafka";

  /** A mode whose p50 is compared, round by round, with a baseline mode's. */
  public record Comparison(String mode, String baseline) {}

  /**
   * The extension with Kafka up and down against the exporting vanilla agent (the like-for-like
   * baseline), its hooks alone against the vanilla agent exporting nothing, and on the Reactor
   * Netty gateway the extension with Kafka against the exporting vanilla agent (absent from runs
   * that found no Reactor Netty gateway).
   */
  public static final List<Comparison> COMPARISONS =
      List.of(
          new Comparison(EXTENSION_KAFKA, VANILLA_OTLP),
          new Comparison(EXTENSION_KAFKA_DOWN, VANILLA_OTLP),
          new Comparison(EXTENSION_NO_EXPORT, VANILLA),
          new Comparison(REACTOR_EXTENSION_KAFKA, REACTOR_VANILLA_OTLP));

  /** One mode's figures (medians over rounds). */
  public record Figures(String mode, double p50Ms, double p99Ms, double requestsPerSecond) {}

  private final int requestsPerRound;
  private final int rounds;
  private final int concurrency;
  private final Path scratch;
  private final CpuPinning pinning;
  private final int warmupRequests;
  private final double rate;
  private final double maxSteal;

  /**
   * @param warmupRequests requests through each gateway before measuring: enough for the JIT to
   *     compile the per-request paths (C2 compiles a method after about 10,000 calls), so that
   *     compilation does not land in the measured rounds
   * @param rate requests/s of the paced (open-loop) latency batches; 0: a quarter of the slowest
   *     gateway's throughput measured at the end of the warm-up (at half, on a 2-core VM, queueing
   *     behind noise made p50 swing by 50%)
   * @param pinning gateways on its measured CPUs, everything else on the others; null to leave
   *     every process free to run anywhere
   * @param maxSteal the paired estimates are given a second time over the rounds in which the
   *     hypervisor took at most this share of the machine's CPU time during either paced batch
   */
  public AgentBenchmark(
      int requestsPerRound,
      int rounds,
      int concurrency,
      int warmupRequests,
      double rate,
      Path scratch,
      CpuPinning pinning,
      double maxSteal) {
    if (requestsPerRound < 10 || rounds < 1 || concurrency < 1 || warmupRequests < 0) {
      throw new IllegalArgumentException(
          "need >= 10 requests per round, >= 1 round, >= 1 concurrent client, >= 0 warm-up requests");
    }
    if (maxSteal < 0 || maxSteal > 1) {
      throw new IllegalArgumentException("--max-steal must be a percentage from 0 to 100");
    }
    this.maxSteal = maxSteal;
    if (rate < 0) {
      throw new IllegalArgumentException(
          "--rate must be positive (or 0 for half the slowest gateway's throughput)");
    }
    this.warmupRequests = warmupRequests;
    this.rate = rate;
    this.requestsPerRound = requestsPerRound;
    this.rounds = rounds;
    this.concurrency = concurrency;
    this.scratch = scratch;
    this.pinning = pinning;
  }

  public List<Figures> run(PrintWriter out) throws IOException, InterruptedException {
    // The JDK HttpServer leaves Nagle on by default: small SSE writes would then wait ~40 ms for
    // delayed ACKs and hide everything else. Set before the fake engine's server class loads.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    Files.createDirectories(scratch);
    if (pinning != null) {
      pinning.pinSelfToOthers(); // before the broker starts: it inherits the affinity
      out.printf(
          "gateways on CPUs %s; load generator, upstream, broker and OTLP receiver on CPUs %s%n",
          pinning.measured(), pinning.others());
    } else {
      out.println("no CPU pinning: gateways, load generator, broker and receiver share every CPU");
    }
    out.flush();
    Path agent = EndToEndDemo.agentDir().resolve("opentelemetry-javaagent.jar");
    KafkaBroker broker =
        KafkaBroker.start(
            new KafkaBroker.Config(
                scratch.resolve("kafka"),
                scratch.resolve("kafka.log"),
                scratch.resolve("kafka.pid"),
                0,
                0));
    // The broker does not auto-create topics: without otlp_spans the "kafka" mode would only retry
    // metadata for a missing topic and deliver nothing (as `llmlat demo` does, create it first).
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, LlmlatTopics.SPANS, 4);
    }
    HttpServer upstream = fakeEngine();
    OtlpReceiver otlp = OtlpReceiver.start();
    String upstreamUrl = "http://127.0.0.1:" + upstream.getAddress().getPort();
    String downBroker;
    try (ServerSocket s = new ServerSocket(0)) {
      downBroker = "127.0.0.1:" + s.getLocalPort();
    }
    Map<String, List<String>> modes = new LinkedHashMap<>();
    modes.put(NO_AGENT, List.of());
    modes.put(VANILLA, concat(agentFlags(agent), "-Dotel.traces.exporter=none"));
    modes.put(
        VANILLA_OTLP,
        concat(
            agentFlags(agent),
            "-Dotel.traces.exporter=otlp",
            "-Dotel.exporter.otlp.protocol=http/protobuf",
            "-Dotel.exporter.otlp.endpoint=" + otlp.endpoint()));
    modes.put(EXTENSION_KAFKA, extensionFlags(broker.bootstrapServers()));
    modes.put(EXTENSION_KAFKA_DOWN, extensionFlags(downBroker));
    // The extension's hooks alone, against "vanilla agent": what the instrumentation costs without
    // any export.
    List<String> hooksOnly = new ArrayList<>(extensionFlags(downBroker));
    hooksOnly.removeIf(
        f -> f.startsWith("-Dotel.traces.exporter") || f.startsWith("-Dotel.exporter.kafka"));
    hooksOnly.add("-Dotel.traces.exporter=none");
    modes.put(EXTENSION_NO_EXPORT, hooksOnly);
    // The Reactor Netty gateway: the same relay on the stack of Spring WebFlux and Spring Cloud
    // Gateway, where
    // the extension's hooks are Netty handlers on the server and the client channels.
    ReactorNettyGateway reactorNetty = ReactorNettyGateway.locate();
    if (reactorNetty.found()) {
      modes.put(
          REACTOR_VANILLA_OTLP,
          concat(
              agentFlags(agent, REACTOR_NETTY_INSTRUMENTATIONS),
              "-Dotel.traces.exporter=otlp",
              "-Dotel.exporter.otlp.protocol=http/protobuf",
              "-Dotel.exporter.otlp.endpoint=" + otlp.endpoint()));
      modes.put(
          REACTOR_EXTENSION_KAFKA,
          concat(
              agentFlags(agent, REACTOR_NETTY_INSTRUMENTATIONS),
              "-Dotel.javaagent.extensions="
                  + EndToEndDemo.agentDir().resolve("llmlat-agent-extension.jar"),
              "-Dotel.traces.exporter=kafka",
              "-Dotel.exporter.kafka.bootstrap.servers=" + broker.bootstrapServers()));
    } else {
      out.println(
          "no Reactor Netty gateway: "
              + reactorNetty.missing()
              + "; measuring the JDK gateway only");
    }
    Map<String, Process> gateways = new LinkedHashMap<>();
    Map<String, Integer> ports = new LinkedHashMap<>();
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    try {
      for (Map.Entry<String, List<String>> m : modes.entrySet()) {
        Path log = scratch.resolve("gateway-" + gateways.size() + ".log");
        // The batch span processor exports every 200 ms, not every 5 s: the gateways share a CPU,
        // and
        // with the default a gateway's last spans of a batch went out seconds later, during another
        // gateway's batch, charging its export to that gateway's latency. (Ignored with no agent.)
        List<String> jvm =
            concat(
                m.getValue(),
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-Dsun.net.httpserver.nodelay=true",
                "-Dotel.bsp.schedule.delay=" + BSP_DELAY_MS);
        List<String> launcher = pinning == null ? List.of() : pinning.measuredLauncher();
        gateways.put(
            m.getKey(),
            m.getKey().startsWith("reactor-netty ")
                ? reactorNetty.start(launcher, jvm, upstreamUrl, log)
                : ChildJvm.start(
                    launcher,
                    jvm,
                    DemoGateway.class.getName(),
                    List.of(upstreamUrl, RELAY_POOL),
                    log));
      }
      int i = 0;
      for (Map.Entry<String, Process> g : gateways.entrySet()) {
        ports.put(
            g.getKey(),
            Integer.parseInt(
                ChildJvm.awaitLine(
                    g.getValue(),
                    scratch.resolve("gateway-" + i++ + ".log"),
                    "LISTENING ",
                    Duration.ofSeconds(90))));
      }
      // Warm-up: JIT, connections, the agent's first spans and exports; interleaved like the
      // rounds,
      // and with paced batches too: the JIT recompiled for a while after the first paced batches
      // when the warm-up had only saturated the gateways.
      int warmupChunk = Math.max(10, requestsPerRound);
      Map<String, Double> saturated = new LinkedHashMap<>();
      double paced = rate;
      for (int done = 0; done < Math.max(warmupRequests, 10); done += warmupChunk) {
        for (Map.Entry<String, Integer> p : ports.entrySet()) {
          saturated.put(p.getKey(), measure(client, pool, p.getValue(), warmupChunk)[2]);
        }
        if (done < Math.max(warmupRequests, 10) * 4 / 5) {
          continue; // paced batches in the last fifth only: at a cold gateway's pace they take
          // minutes
        }
        if (rate == 0) {
          paced = quarterOfSlowest(saturated);
        }
        for (Map.Entry<String, Integer> p : ports.entrySet()) {
          measurePaced(client, p.getValue(), warmupChunk, paced);
        }
      }
      if (paced == 0) {
        paced = quarterOfSlowest(saturated); // a warm-up too short to reach its paced batches
      }
      out.printf(
          "warmed up: %d requests through each gateway; paced latency batches at %.0f requests/s%n",
          Math.max(warmupRequests, 10), paced);
      out.flush();
      // Per round and mode: a saturating batch (closed loop: throughput, CPU per request), then a
      // paced batch (open loop at a fixed rate: the latency a request sees on a gateway that is not
      // saturated, timed from its scheduled start so that a stall is not hidden).
      Map<String, List<double[]>> saturation = new LinkedHashMap<>();
      Map<String, List<double[]>> latency = new LinkedHashMap<>();
      // CPU each gateway and the broker spent while that gateway was measured: where export cost
      // goes
      Map<String, ProcessCpu[]> cpu = new LinkedHashMap<>();
      // Share of the machine's CPU time stolen by the hypervisor during each paced batch
      Map<String, List<Double>> stolen = new LinkedHashMap<>();
      List<String> order = new ArrayList<>(ports.keySet());
      for (int round = 0; round < rounds; round++) {
        // Each round starts one mode later, so that no mode always follows the same one.
        for (int m = 0; m < order.size(); m++) {
          String mode = order.get((round + m) % order.size());
          int port = ports.get(mode);
          ProcessCpu gateway0 = ProcessCpu.of(gateways.get(mode).toHandle());
          ProcessCpu broker0 = ProcessCpu.of(ProcessHandle.of(broker.pid()).orElse(null));
          saturation
              .computeIfAbsent(mode, k -> new ArrayList<>())
              .add(measure(client, pool, port, requestsPerRound));
          // The saturating burst's spans are exported (gateway CPU, broker or receiver beside the
          // load
          // generator) before the paced batch starts: else its export lands in the first part of
          // the
          // paced batch, charged to the latency of a gateway that is not saturated.
          Thread.sleep(DRAIN_MS);
          ProcessCpu[] c =
              cpu.computeIfAbsent(
                  mode, k -> new ProcessCpu[] {new ProcessCpu(0, 0), new ProcessCpu(0, 0)});
          c[0] = c[0].plus(ProcessCpu.of(gateways.get(mode).toHandle()).minus(gateway0));
          c[1] =
              c[1].plus(ProcessCpu.of(ProcessHandle.of(broker.pid()).orElse(null)).minus(broker0));
          StolenTime before = StolenTime.sample();
          latency
              .computeIfAbsent(mode, k -> new ArrayList<>())
              .add(measurePaced(client, port, requestsPerRound, paced));
          stolen
              .computeIfAbsent(mode, k -> new ArrayList<>())
              .add(StolenTime.sample().shareSince(before));
          Thread.sleep(
              DRAIN_MS); // the paced batch's last spans go out before the next gateway's batch
        }
        StringBuilder line = new StringBuilder("round " + (round + 1) + " p50 ms (stolen CPU):");
        for (String mode : order) {
          line.append(
              String.format(
                  Locale.ROOT,
                  " %s %.3f (%.0f%%);",
                  mode,
                  latency.get(mode).get(round)[0],
                  100 * stolen.get(mode).get(round)));
        }
        out.println(line);
        out.flush();
      }
      List<Figures> figures = new ArrayList<>();
      for (String mode : latency.keySet()) {
        figures.add(
            new Figures(
                mode,
                median(latency.get(mode), 0),
                median(latency.get(mode), 1),
                median(saturation.get(mode), 2)));
      }
      Figures none = figures.get(0);
      Figures vanilla = figures.get(1);
      Figures exporting = figures.get(2);
      out.printf(
          "latency at %.0f requests/s (open loop) and throughput at saturation (%d concurrent clients):%n",
          paced, concurrency);
      for (Figures f : figures) {
        out.printf(
            "%-36s p50 %7.3f ms  p99 %7.3f ms  %8.1f req/s  p50 vs vanilla+otlp %+6.1f%%  vs vanilla (no export) %+6.1f%%"
                + "  vs no agent %+6.1f%%%n",
            f.mode(),
            f.p50Ms(),
            f.p99Ms(),
            f.requestsPerSecond(),
            100 * (f.p50Ms() / exporting.p50Ms() - 1),
            100 * (f.p50Ms() / vanilla.p50Ms() - 1),
            100 * (f.p50Ms() / none.p50Ms() - 1));
      }
      out.printf(
          "(%d rounds x %d requests per mode and batch, medians over rounds)%n",
          rounds, requestsPerRound);
      for (Map.Entry<String, ProcessCpu[]> c : cpu.entrySet()) {
        double requests = (double) rounds * requestsPerRound;
        ProcessCpu g = c.getValue()[0];
        ProcessCpu b = c.getValue()[1];
        out.printf(
            "%-36s CPU per request: gateway %6.1f us (+ JIT %5.1f us), broker %6.1f us;  p50 at saturation %7.3f ms%n",
            c.getKey(),
            g.applicationNanos() / 1e3 / requests,
            g.jitNanos() / 1e3 / requests,
            (b.applicationNanos() + b.jitNanos()) / 1e3 / requests,
            median(saturation.get(c.getKey()), 0));
      }
      out.printf(
          "delivered while measuring: OTLP receiver %d spans in %d requests; Kafka %s%n",
          otlp.spans(), otlp.requests(), kafkaRecords(broker.bootstrapServers()));
      PairedRatio up = pairedRatio(latency.get(EXTENSION_KAFKA), latency.get(VANILLA_OTLP));
      PairedRatio down = pairedRatio(latency.get(EXTENSION_KAFKA_DOWN), latency.get(VANILLA_OTLP));
      PairedRatio hooks = pairedRatio(latency.get(EXTENSION_NO_EXPORT), latency.get(VANILLA));
      double cpuUp =
          (double) cpu.get(EXTENSION_KAFKA)[0].applicationNanos()
              / cpu.get(VANILLA_OTLP)[0].applicationNanos();
      out.printf(
          "extension overhead on p50 against the exporting vanilla agent (median of per-round ratios, bootstrap 95%% CI):"
              + " Kafka up %s, Kafka down %s (target: under 5%%)%n",
          up.asChange(), down.asChange());
      out.printf(
          "extension hooks alone (no export) against the vanilla agent (no export): %s%n",
          hooks.asChange());
      if (latency.containsKey(REACTOR_EXTENSION_KAFKA)) {
        out.printf(
            "Reactor Netty gateway (server and client hooks): extension + Kafka against the exporting vanilla agent"
                + " on p50: %s%n",
            pairedRatio(latency.get(REACTOR_EXTENSION_KAFKA), latency.get(REACTOR_VANILLA_OTLP))
                .asChange());
      }
      // The same over the rounds whose two compared batches ran while the hypervisor took little of
      // the machine: a mode-blind rule (steal is the neighbours' doing, not the gateways').
      out.printf(
          "rounds in which the hypervisor took at most %.0f%% of the CPU during both compared batches:%n",
          100 * maxSteal);
      for (Comparison c : COMPARISONS) {
        if (!latency.containsKey(c.mode())) {
          continue;
        }
        List<double[]> a = new ArrayList<>();
        List<double[]> b = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
          if (stolen.get(c.mode()).get(r) <= maxSteal
              && stolen.get(c.baseline()).get(r) <= maxSteal) {
            a.add(latency.get(c.mode()).get(r));
            b.add(latency.get(c.baseline()).get(r));
          }
        }
        if (a.isEmpty()) {
          out.printf("  %s against %s: no such round%n", c.mode(), c.baseline());
          continue;
        }
        out.printf(
            "  %s against %s: %s over %d of %d rounds%n",
            c.mode(), c.baseline(), pairedRatio(a, b).asChange(), a.size(), rounds);
      }
      out.printf(
          "gateway CPU per request (JIT excluded), extension + Kafka against vanilla + OTLP: %+.1f%%"
              + " (at saturation this is what p50 and throughput pay)%n",
          100 * (cpuUp - 1));
      out.flush();
      return figures;
    } finally {
      pool.shutdownNow();
      gateways.values().forEach(Process::destroy);
      for (Process p : gateways.values()) {
        p.waitFor();
      }
      upstream.stop(0);
      otlp.close();
      broker.stop(Duration.ofSeconds(20));
    }
  }

  /**
   * The agent's instrumentations of the demo relay: its HTTP server (the JDK's) and client (Apache
   * HttpClient 5).
   */
  private static final List<String> JDK_INSTRUMENTATIONS =
      List.of("java-http-server", "apache-httpclient");

  /**
   * The demo relay's upstream pool: more connections than clients, so no request waits for one and
   * latency is the stack's.
   */
  private static final String RELAY_POOL = "64";

  /**
   * The agent's instrumentations of the Reactor Netty gateway (as a WebFlux application has them).
   */
  private static final List<String> REACTOR_NETTY_INSTRUMENTATIONS =
      List.of("netty", "reactor", "reactor-netty");

  /** JVM flags for a gateway under the real agent, only the HTTP server and client instrumented. */
  private static List<String> agentFlags(Path agent) {
    return agentFlags(agent, JDK_INSTRUMENTATIONS);
  }

  private static List<String> agentFlags(Path agent, List<String> instrumentations) {
    List<String> flags =
        new ArrayList<>(
            List.of(
                "-javaagent:" + agent,
                "-Dotel.service.name=bench-gateway",
                "-Dotel.metrics.exporter=none",
                "-Dotel.logs.exporter=none",
                "-Dotel.instrumentation.common.default-enabled=false"));
    for (String instrumentation : instrumentations) {
      flags.add("-Dotel.instrumentation." + instrumentation + ".enabled=true");
    }
    return flags;
  }

  /** The same plus llmlat's extension exporting spans to Kafka at {@code bootstrap}. */
  public static List<String> extensionFlags(String bootstrap, String... extra) {
    List<String> flags =
        concat(
            agentFlags(EndToEndDemo.agentDir().resolve("opentelemetry-javaagent.jar")),
            "-Dotel.javaagent.extensions="
                + EndToEndDemo.agentDir().resolve("llmlat-agent-extension.jar"),
            "-Dotel.traces.exporter=kafka",
            "-Dotel.exporter.kafka.bootstrap.servers=" + bootstrap);
    flags.addAll(Arrays.asList(extra));
    return flags;
  }

  /**
   * The demo gateway (a plain relay) as a child JVM with {@code jvmFlags}; returns once it listens,
   * with its port.
   */
  public static Map.Entry<Process, Integer> startGateway(
      List<String> jvmFlags, String upstreamUrl, Path log)
      throws IOException, InterruptedException {
    List<String> jvm =
        concat(jvmFlags, "-Xmx256m", "-XX:+UseSerialGC", "-Dsun.net.httpserver.nodelay=true");
    Process gateway =
        ChildJvm.start(jvm, DemoGateway.class.getName(), List.of(upstreamUrl, RELAY_POOL), log);
    return Map.entry(
        gateway,
        Integer.parseInt(ChildJvm.awaitLine(gateway, log, "LISTENING ", Duration.ofSeconds(90))));
  }

  /**
   * The Reactor Netty gateway of the agent extension's tests ({@code ReactorNettyGatewayMain}:
   * Reactor Netty's server in, its client out, each SSE buffer flushed), run from that module's
   * build output: its test classes and the Reactor Netty and Netty jars its build copies next to
   * them (`mvn package`, as ./llmlat runs it, makes both). The analyzer itself does not depend on
   * Reactor Netty.
   */
  record ReactorNettyGateway(String classPath, String missing) {
    static final String MAIN = "dev.llmlat.agent.gatewayapp.ReactorNettyGatewayMain";

    static ReactorNettyGateway locate() {
      // from the CLI's target/agent up to the repository, then the extension module's target
      Path repository = EndToEndDemo.agentDir().toAbsolutePath().normalize();
      while (repository != null
          && !Files.isDirectory(repository.resolve("instrumentation/agent-extension"))) {
        repository = repository.getParent();
      }
      if (repository == null) {
        return new ReactorNettyGateway(
            null, "no repository above " + EndToEndDemo.agentDir() + " (run from a checkout)");
      }
      Path target = repository.resolve("instrumentation/agent-extension/target");
      Path classes = target.resolve("test-classes");
      Path libs = target.resolve("gateway-libs/reactor-netty");
      if (!Files.isRegularFile(classes.resolve(MAIN.replace('.', '/') + ".class"))
          || !Files.isDirectory(libs)) {
        return new ReactorNettyGateway(
            null, classes + " or " + libs + " is missing (built by `mvn package`)");
      }
      try (var jars = Files.list(libs)) {
        List<String> entries = new ArrayList<>(List.of(classes.toString()));
        jars.map(Path::toString).filter(j -> j.endsWith(".jar")).sorted().forEach(entries::add);
        return new ReactorNettyGateway(String.join(java.io.File.pathSeparator, entries), null);
      } catch (IOException e) {
        return new ReactorNettyGateway(null, libs + " is unreadable: " + e.getMessage());
      }
    }

    boolean found() {
      return classPath != null;
    }

    /** As {@link ChildJvm#start}, with this gateway's class path instead of the analyzer's. */
    Process start(List<String> launcher, List<String> jvm, String upstreamUrl, Path log)
        throws IOException {
      List<String> command = new ArrayList<>(launcher);
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.addAll(jvm);
      command.addAll(List.of("-cp", classPath, MAIN, upstreamUrl));
      return new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
          .start();
    }
  }

  /** An upstream that streams 8 SSE chunks at once: the gateway's own cost is what is measured. */
  public static HttpServer fakeEngine() throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
    byte[] chunk =
        "data: {\"choices\":[{\"delta\":{\"content\":\"tok\"}}]}\n\n"
            .getBytes(StandardCharsets.UTF_8);
    server.createContext(
        "/v1/",
        exchange -> {
          try (exchange;
              InputStream in = exchange.getRequestBody()) {
            in.readAllBytes();
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            for (int i = 0; i < 8; i++) {
              out.write(chunk);
              out.flush();
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
          }
        });
    server.setExecutor(Executors.newFixedThreadPool(8));
    server.start();
    return server;
  }

  /**
   * p50 ms, p99 ms, requests/s of {@code requests} sent at a fixed rate whatever the responses do
   * (open loop); each latency is from the request's scheduled start, so time a request spent
   * waiting to be sent behind a stalled one counts too.
   */
  private static double[] measurePaced(HttpClient client, int port, int requests, double perSecond)
      throws InterruptedException {
    HttpRequest request = chatRequest(port);
    long interval = (long) (1e9 / perSecond);
    List<java.util.concurrent.CompletableFuture<Long>> futures = new ArrayList<>(requests);
    long t0 = System.nanoTime() + 1_000_000;
    for (int i = 0; i < requests; i++) {
      long scheduled = t0 + i * interval;
      for (long wait; (wait = scheduled - System.nanoTime()) > 0; ) {
        java.util.concurrent.locks.LockSupport.parkNanos(wait);
      }
      futures.add(
          client
              .sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
              .thenApply(
                  r -> {
                    if (r.statusCode() != 200) {
                      throw new IllegalStateException("gateway answered " + r.statusCode());
                    }
                    return System.nanoTime() - scheduled;
                  }));
    }
    return summary(futures, t0);
  }

  private static HttpRequest chatRequest(int port) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
        .header("Content-Type", "application/json")
        .timeout(Duration.ofSeconds(30))
        .POST(
            HttpRequest.BodyPublishers.ofString(
                "{\"model\":\"m\",\"stream\":true,\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
        .build();
  }

  /** p50 ms, p99 ms, requests/s of a batch of request latencies (ns) started at {@code t0}. */
  private static double[] summary(List<? extends Future<Long>> futures, long t0)
      throws InterruptedException {
    int requests = futures.size();
    long[] latencies = new long[requests];
    for (int i = 0; i < requests; i++) {
      try {
        latencies[i] = futures.get(i).get();
      } catch (java.util.concurrent.ExecutionException e) {
        throw new IllegalStateException("benchmark request failed: " + e.getCause(), e.getCause());
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    Arrays.sort(latencies);
    return new double[] {
      latencies[requests / 2] / 1e6,
      latencies[(int) Math.min(requests - 1, Math.floor(requests * 0.99))] / 1e6,
      requests / seconds
    };
  }

  /** The default paced rate: a quarter of the slowest gateway's saturated throughput. */
  private static double quarterOfSlowest(Map<String, Double> saturated) {
    return 0.25 * saturated.values().stream().mapToDouble(Double::doubleValue).min().orElse(400);
  }

  /**
   * p50 ms, p99 ms, requests/s of one batch through one gateway, {@code concurrency} clients in a
   * closed loop.
   */
  private static double[] measure(HttpClient client, ExecutorService pool, int port, int requests)
      throws InterruptedException {
    HttpRequest request = chatRequest(port);
    List<Future<Long>> futures = new ArrayList<>();
    long t0 = System.nanoTime();
    for (int i = 0; i < requests; i++) {
      futures.add(
          pool.submit(
              () -> {
                long start = System.nanoTime();
                HttpResponse<byte[]> r =
                    client.send(request, HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() != 200) {
                  throw new IOException("gateway answered " + r.statusCode());
                }
                return System.nanoTime() - start;
              }));
    }
    return summary(futures, t0);
  }

  /**
   * The median over rounds of {@code a}'s p50 divided by {@code b}'s in the same round, and a 95%
   * bootstrap interval of that median.
   */
  private static PairedRatio pairedRatio(List<double[]> a, List<double[]> b) {
    double[] r = new double[a.size()];
    for (int i = 0; i < r.length; i++) {
      r[i] = a.get(i)[0] / b.get(i)[0];
    }
    return PairedRatio.of(List.of(r));
  }

  /** Records on the spans topic: proof that the Kafka mode really delivered while measured. */
  private static String kafkaRecords(String bootstrap) {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec>
          latest = new LinkedHashMap<>();
      for (org.apache.kafka.common.TopicPartitionInfo p :
          admin
              .describeTopics(List.of(LlmlatTopics.SPANS))
              .allTopicNames()
              .get(30, java.util.concurrent.TimeUnit.SECONDS)
              .get(LlmlatTopics.SPANS)
              .partitions()) {
        latest.put(
            new org.apache.kafka.common.TopicPartition(LlmlatTopics.SPANS, p.partition()),
            org.apache.kafka.clients.admin.OffsetSpec.latest());
      }
      long records = 0;
      for (var e :
          admin.listOffsets(latest).all().get(30, java.util.concurrent.TimeUnit.SECONDS).values()) {
        records += e.offset();
      }
      return records + " records (one per trace) on " + LlmlatTopics.SPANS;
    } catch (Exception e) {
      return "record count unavailable (" + e + ")";
    }
  }

  private static double median(List<double[]> rounds, int index) {
    return Quantiles.median(rounds.stream().mapToDouble(r -> r[index]).toArray());
  }

  @SafeVarargs
  private static <T> List<T> concat(List<T> list, T... more) {
    List<T> out = new ArrayList<>(list);
    out.addAll(Arrays.asList(more));
    return out;
  }
}
