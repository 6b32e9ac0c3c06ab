package dev.llmlat.cli;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.analyze.store.TraceReader;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.demo.EndToEndDemo;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.otlpkafka.KafkaClientWarnings;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.report.AttributionReport;
import dev.llmlat.report.GroupReport;
import dev.llmlat.report.Waterfall;
import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.services.DiskSpace;
import dev.llmlat.services.DiskWatch;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.services.LocalServices;
import dev.llmlat.services.PidFile;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.StoreConfig;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.admin.Admin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "The main job on embedded defaults: every layer for real on this machine.",
      "An instrumented engine (continuous",
      "batching, H200 step-time model, GPU step spans) behind a gateway running under the real OpenTelemetry agent",
      "with llmlat's extension; streamed requests through the gateway; spans through Kafka and the ingester into",
      "the store; then alignment and attribution, a report, and the slowest request's waterfall.",
      "Uses the running services (llmlat services up); otherwise starts a broker for this run and ingests in-process.",
      "--synthetic writes generated traces instead (no engine, no agent)."
    })
final class DemoCommand implements Callable<Integer> {
  private static final Duration LANDING_TIMEOUT = Duration.ofSeconds(90);

  @Mixin StoreOptions store;
  @Mixin KafkaOptions kafka;

  @Option(
      names = "--requests",
      defaultValue = "16",
      description = "Requests to send. Default: ${DEFAULT-VALUE}.")
  int requests;

  @Option(
      names = "--rate",
      defaultValue = "3",
      description = "Requests per second (Poisson arrivals). Default: ${DEFAULT-VALUE}.")
  double rate;

  @Option(
      names = "--time-scale",
      defaultValue = "0.25",
      description =
          "Engine step time as a fraction of the H200's measured step time. Default: ${DEFAULT-VALUE}.")
  double timeScale;

  @Option(
      names = "--gateway-pool",
      defaultValue = "4",
      paramLabel = "N",
      description =
          "Connections the demo gateway's HTTP client pools to the engine: streams beyond them wait for one, and the"
              + " attribution shows that wait as upstream_pool_wait. Default: ${DEFAULT-VALUE}.")
  int gatewayPool;

  @Option(
      names = "--synthetic",
      description = "Generated traces instead of the engine and gateway (fast, no agent).")
  boolean synthetic;

  @Option(
      names = "--seed",
      defaultValue = "42",
      description = "Random seed of the generated traces. Default: ${DEFAULT-VALUE}.")
  long seed;

  @Spec CommandSpec spec;

  /**
   * The broker started for this run, if one was (the disk watch asks it whether it died of a full
   * disk).
   */
  private volatile KafkaBroker ownBroker;

  @Override
  public Integer call() throws IOException, InterruptedException {
    if (requests < 1 || requests > 1000) {
      throw new IllegalArgumentException("--requests must be between 1 and 1000, got " + requests);
    }
    new EndToEndDemo.Config(
        requests,
        rate,
        seed,
        timeScale,
        gatewayPool); // bad options are refused before anything else
    LlmlatHome home = LlmlatHome.fromEnvironment();
    LocalServices services = Llmlat.services(home);
    List<Path> dirs = diskDirs(home, services);
    DiskSpace.require(dirs, DiskSpace.START_MIN_FREE, "the demo");
    Thread command = Thread.currentThread();
    // A full disk stops the run at once: its writers would only time out, minutes later, saying
    // something else.
    try (KafkaClientWarnings warnings = KafkaClientWarnings.install(Duration.ofSeconds(30));
        DiskWatch watch =
            DiskWatch.start(
                dirs,
                List.of(() -> ownBroker == null ? null : ownBroker.diskFailure()),
                Duration.ofMillis(250),
                full -> command.interrupt())) {
      try {
        int exit = demo(home, services);
        if (watch.full() != null) {
          throw watch
              .full(); // something on the way swallowed the interrupt: what it wrote is suspect
        }
        return exit;
      } catch (Exception e) {
        DiskSpace.Full full = watch.explain(e);
        if (full == null) {
          throw e;
        }
        Thread.interrupted(); // the watch's, not a signal's
        throw new IllegalStateException(
            full.getMessage()
                + "; the demo stopped (what it stored is whole; free some space"
                + " and run it again)",
            full);
      }
    }
  }

  /**
   * Where the demo writes: the home (logs, its broker's scratch log), the services' broker log, the
   * store's data.
   */
  private List<Path> diskDirs(LlmlatHome home, LocalServices services) {
    List<Path> dirs = new ArrayList<>(List.of(home.root()));
    if (kafka.bootstrap == null && services.kafkaBootstrap().isPresent()) {
      dirs.add(home.kafkaData());
    }
    StoreConfig config = store.config();
    if (config.kind() == StoreConfig.Kind.EMBEDDED) {
      dirs.add(config.dataDir());
    } else if (services.storeUrl().filter(config.url()::equals).isPresent()) {
      dirs.add(home.clickhouseData()); // the services' store process writes there
    }
    return DiskWatch.distinct(dirs);
  }

  private int demo(LlmlatHome home, LocalServices services)
      throws IOException, InterruptedException {
    EndToEndDemo.Config endToEnd =
        new EndToEndDemo.Config(requests, rate, seed, timeScale, gatewayPool);
    PrintWriter out = spec.commandLine().getOut();
    boolean servicesIngest =
        PidFile.read(services.pidFile(LocalServices.INGEST)).isPresent()
            && store.url == null
            && store.dataDir == null
            && kafka.bootstrap == null;
    String bootstrap =
        servicesIngest ? services.kafkaBootstrap().orElseThrow() : kafka.bootstrapOrRunning();
    Path brokerDir = null;
    if (bootstrap == null) {
      brokerDir =
          Files.createDirectories(home.root().resolve("tmp"))
              .resolve("demo-kafka-" + ProcessHandle.current().pid());
      out.println("starting a Kafka broker for this run (llmlat services up keeps one running)...");
      out.flush();
      try {
        ownBroker =
            KafkaBroker.start(
                new KafkaBroker.Config(
                    brokerDir,
                    home.logs().resolve("demo-kafka.log"),
                    brokerDir.resolve("kafka.pid"),
                    0,
                    0));
      } catch (RuntimeException e) {
        ChildJvm.deleteRecursively(
            brokerDir); // a broker that never served leaves no scratch log behind
        throw e;
      }
      bootstrap = ownBroker.bootstrapServers();
    }
    try (ClickHouseStore s = store.openForWriting()) {
      try (Admin admin = kafka.clientProperties().admin(bootstrap)) {
        SpanTopics.ensure(admin, LlmlatTopics.SPANS, 4);
      }
      out.println(
          "store: "
              + s.description()
              + " (ClickHouse "
              + s.query("SELECT version()").single()
              + ")");
      out.println("kafka: " + bootstrap + (ownBroker != null ? " (started for this run)" : ""));
      if (!synthetic) {
        runEndToEnd(s, bootstrap, kafka.clientProperties(), servicesIngest, home, endToEnd, out);
        return 0;
      }
      List<DemoTraces.Request> generated = new ArrayList<>();
      // Distinct trace ids on every run; the seed fixes the shape of the requests.
      ExportTraceServiceRequest batch =
          new DemoTraces(seed ^ System.nanoTime(), System.currentTimeMillis() * 1_000_000L)
              .generate(requests, generated);
      int spans = SpanPublisher.spanCount(batch);
      String ids = DemoTraces.sqlList(generated);
      SpanIngester ingester =
          servicesIngest ? null : startIngester(s, bootstrap, kafka.clientProperties());
      try {
        long t0 = System.nanoTime();
        try (SpanPublisher publisher =
            new SpanPublisher(bootstrap, LlmlatTopics.SPANS, null, kafka.clientProperties())) {
          publisher.publish(batch);
          publisher.flush();
          out.printf(
              "published %d spans of %d requests as %d OTLP records (key = trace id) to %s%n",
              spans, requests, publisher.records(), LlmlatTopics.SPANS);
        }
        String countSql = "SELECT count() FROM otel_traces WHERE TraceId IN " + ids;
        long deadline = System.nanoTime() + LANDING_TIMEOUT.toNanos();
        while (Long.parseLong(s.query(countSql).single()) < spans) {
          if (System.nanoTime() > deadline || (ingester != null && ingester.failure() != null)) {
            throw new IllegalStateException(
                "the spans did not land in the store within "
                    + LANDING_TIMEOUT.toSeconds()
                    + " s"
                    + (ingester != null && ingester.failure() != null
                        ? ": " + ingester.failure()
                        : "; see " + services.log(LocalServices.INGEST)));
          }
          Thread.sleep(50);
        }
        out.printf(
            "the %s ingested them into otel_traces in %d ms (Kafka -> ingester -> ClickHouse)%n%n",
            ingester == null ? "ingester service" : "ingester",
            (System.nanoTime() - t0) / 1_000_000);
      } finally {
        if (ingester != null) {
          ingester.close();
        }
      }
      printLanded(s, generated, ids, out);
    } finally {
      if (ownBroker != null) {
        KafkaBroker broker = ownBroker;
        ownBroker = null; // stopped on purpose: not a death for the disk watch to report
        broker.stop(Duration.ofSeconds(20));
        ChildJvm.deleteRecursively(brokerDir); // the broker's scratch log goes, full disk or not
      }
    }
    return 0;
  }

  /** The demo's own ingester, when no `llmlat services` ingester runs. */
  private static SpanIngester startIngester(
      ClickHouseStore s, String bootstrap, KafkaClientProperties kafkaClient) {
    return new SpanIngester(
            IngesterConfig.builder(bootstrap)
                .linger(Duration.ofMillis(200))
                .reportInterval(Duration.ZERO)
                .kafkaClient(kafkaClient)
                .build(),
            s)
        .start();
  }

  private static void runEndToEnd(
      ClickHouseStore s,
      String bootstrap,
      KafkaClientProperties kafkaClient,
      boolean servicesIngest,
      LlmlatHome home,
      EndToEndDemo.Config config,
      PrintWriter out)
      throws IOException, InterruptedException {
    SpanIngester ingester = servicesIngest ? null : startIngester(s, bootstrap, kafkaClient);
    long start = System.currentTimeMillis() * 1_000_000L;
    List<EndToEndDemo.ClientRequest> sent;
    try {
      sent = EndToEndDemo.run(bootstrap, kafkaClient, s, home.logs(), config, out);
    } finally {
      if (ingester != null) {
        ingester.close();
      }
    }
    out.println();
    out.println("-- spans that landed, per layer");
    String ids =
        TraceReader.sqlList(sent.stream().map(EndToEndDemo.ClientRequest::traceId).toList());
    ResultPrinter.print(
        s.query(
            "SELECT ResourceAttributes['llmlat.layer'] AS layer, ServiceName AS service, count() AS spans,"
                + " uniqExact(TraceId) AS traces FROM otel_traces WHERE TraceId IN "
                + ids
                + " GROUP BY layer, service ORDER BY layer"),
        ResultPrinter.Format.table,
        out);
    Analyzer.Summary summary =
        new Analyzer(s).analyze(start - 60_000_000_000L, Long.MAX_VALUE / 2, true);
    out.printf("%nanalyzed: %d requests attributed%n%n", summary.written());
    out.println(
        "-- TTFT as the client measured it vs. as attributed (client request -> first content chunk), and the server's own");
    List<List<String>> rows = new ArrayList<>();
    Map<String, List<String>> attributed = new java.util.HashMap<>();
    for (List<String> r :
        s.query(
                "SELECT TraceId, TtftNs, ServerTtftNs, ClientToGatewayNs + GatewayToClientNs, QueueNs,"
                    + " PrefillCpuNs + PrefillGpuNs + BatchInterferenceNs, UnattributedNs"
                    + " FROM llm_request_attribution FINAL WHERE TraceId IN ("
                    + ids
                    + ")")
            .rows()) {
      attributed.put(r.get(0), r);
    }
    for (EndToEndDemo.ClientRequest r : sent) {
      List<String> a = attributed.get(r.traceId());
      List<String> row =
          new ArrayList<>(
              List.of(
                  r.traceId(),
                  Integer.toString(r.promptTokens()),
                  String.format("%.1f", r.ttftNs() / 1e6)));
      for (int i = 1; i <= 6; i++) {
        row.add(a == null ? "-" : String.format("%.1f", Long.parseLong(a.get(i)) / 1e6));
      }
      rows.add(row);
    }
    ResultPrinter.print(
        new dev.llmlat.store.QueryResult(
            List.of(
                col("trace_id", "String"),
                col("prompt_tokens", "UInt32"),
                col("client_ttft_ms", "Float64"),
                col("ttft_ms", "Float64"),
                col("server_ttft_ms", "Float64"),
                col("to_gateway_and_back_ms", "Float64"),
                col("queue_ms", "Float64"),
                col("prefill_ms", "Float64"),
                col("unattributed_ms", "Float64")),
            rows),
        ResultPrinter.Format.table,
        out);
    out.println();
    AttributionReport report = AttributionReport.load(s, start - 60_000_000_000L, 500_000_000L);
    report.printText(out);
    out.println(
        "-- llmlat report --by tenant: two tenants, chat (short prompts) and batch (long ones)");
    GroupReport.load(s, GroupReport.Dimension.TENANT, start - 60_000_000_000L, 500_000_000L)
        .printText(out);
    if (!report.slowest().isEmpty()) {
      out.println();
      out.println("-- the slowest request: llmlat explain " + report.slowest().get(0).traceId());
      Waterfall.print(new Analyzer(s).explain(report.slowest().get(0).traceId()), out);
    }
  }

  private static dev.llmlat.store.QueryResult.Column col(String name, String type) {
    return new dev.llmlat.store.QueryResult.Column(name, type);
  }

  private static void printLanded(
      ClickHouseStore s, List<DemoTraces.Request> generated, String ids, PrintWriter out) {
    out.println("-- spans per request and layer");
    ResultPrinter.print(
        s.query(
            "SELECT TraceId, ResourceAttributes['llmlat.layer'] AS layer, count() AS spans,"
                + " round(sum(Duration) / 1e6, 3) AS total_ms"
                + " FROM otel_traces WHERE TraceId IN "
                + ids
                + " GROUP BY TraceId, layer ORDER BY min(Timestamp), TraceId, layer"),
        ResultPrinter.Format.table,
        out);
    out.println();
    out.println("-- the first request, span by span");
    ResultPrinter.print(
        s.query(
            "SELECT formatDateTime(Timestamp, '%H:%i:%S.%f') AS start, ServiceName, ResourceAttributes['llmlat.layer'] AS layer,"
                + " SpanName, SpanKind, round(Duration / 1e6, 3) AS ms"
                + " FROM otel_traces WHERE TraceId = '"
                + generated.get(0).traceIdHex()
                + "' ORDER BY Timestamp, SpanName"),
        ResultPrinter.Format.table,
        out);
    out.println();
    out.println("-- GPU steps and the requests they served (links)");
    ResultPrinter.print(
        s.query(
            "SELECT SpanId AS step, SpanAttributes['llmlat.step.batch_size'] AS batch, length(Links.TraceId) AS requests,"
                + " round(Duration / 1e6, 3) AS ms FROM otel_traces"
                + " WHERE ResourceAttributes['llmlat.layer'] = 'gpu' AND TraceId IN "
                + ids
                + " ORDER BY Timestamp"),
        ResultPrinter.Format.table,
        out);
  }
}
