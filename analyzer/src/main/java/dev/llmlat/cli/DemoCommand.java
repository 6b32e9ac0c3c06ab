package dev.llmlat.cli;

import dev.llmlat.demo.DemoTraces;
import dev.llmlat.home.LlmlatHome;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.kafka.SpanPublisher;
import dev.llmlat.kafka.SpanTopics;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.services.LocalServices;
import dev.llmlat.services.PidFile;
import dev.llmlat.store.ClickHouseStore;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "The main job on embedded defaults. Generates multi-layer request traces (gateway, engine, GPU), publishes",
      "them as OTLP records to Kafka, lets the ingester write them to the store and prints what landed.",
      "Uses the running services (llmlat services up); otherwise starts a broker for this run and ingests in-process."
    })
final class DemoCommand implements Callable<Integer> {
  private static final Duration LANDING_TIMEOUT = Duration.ofSeconds(90);

  @Mixin StoreOptions store;
  @Mixin KafkaOptions kafka;

  @Option(names = "--requests", defaultValue = "4", description = "Requests to generate. Default: ${DEFAULT-VALUE}.")
  int requests;

  @Option(names = "--seed", defaultValue = "42", description = "Random seed of the generated traces. Default: ${DEFAULT-VALUE}.")
  long seed;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException, InterruptedException {
    if (requests < 1 || requests > 10_000) {
      throw new IllegalArgumentException("--requests must be between 1 and 10000, got " + requests);
    }
    PrintWriter out = spec.commandLine().getOut();
    LlmlatHome home = LlmlatHome.fromEnvironment();
    LocalServices services = new LocalServices(home);
    boolean servicesIngest = PidFile.read(services.pidFile(LocalServices.INGEST)).isPresent()
        && store.url == null && store.dataDir == null && kafka.bootstrap == null;
    String bootstrap = servicesIngest ? services.kafkaBootstrap().orElseThrow() : kafka.bootstrapOrRunning();
    KafkaBroker ownBroker = null;
    Path brokerDir = null;
    if (bootstrap == null) {
      brokerDir = Files.createDirectories(home.root().resolve("tmp")).resolve("demo-kafka-" + ProcessHandle.current().pid());
      out.println("starting a Kafka broker for this run (llmlat services up keeps one running)...");
      out.flush();
      ownBroker = KafkaBroker.start(new KafkaBroker.Config(brokerDir, home.logs().resolve("demo-kafka.log"),
          brokerDir.resolve("kafka.pid"), 0, 0));
      bootstrap = ownBroker.bootstrapServers();
    }
    try (ClickHouseStore s = store.open()) {
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
        SpanTopics.ensure(admin, SpanTopics.SPANS, 4);
      }
      out.println("store: " + s.description() + " (ClickHouse " + s.query("SELECT version()").single() + ")");
      out.println("kafka: " + bootstrap + (ownBroker != null ? " (started for this run)" : ""));
      List<DemoTraces.Request> generated = new ArrayList<>();
      // Distinct trace ids on every run; the seed fixes the shape of the requests.
      ExportTraceServiceRequest batch =
          new DemoTraces(seed ^ System.nanoTime(), System.currentTimeMillis() * 1_000_000L).generate(requests, generated);
      int spans = batch.getResourceSpansList().stream()
          .flatMap(rs -> rs.getScopeSpansList().stream()).mapToInt(ss -> ss.getSpansCount()).sum();
      String ids = DemoTraces.sqlList(generated);
      SpanIngester ingester = servicesIngest ? null
          : new SpanIngester(IngesterConfig.builder(bootstrap).linger(Duration.ofMillis(200)).reportInterval(Duration.ZERO).build(), s).start();
      try {
        long t0 = System.nanoTime();
        try (SpanPublisher publisher = new SpanPublisher(bootstrap, SpanTopics.SPANS)) {
          publisher.publish(batch);
          publisher.flush();
          out.printf("published %d spans of %d requests as %d OTLP records (key = trace id) to %s%n",
              spans, requests, publisher.records(), SpanTopics.SPANS);
        }
        String countSql = "SELECT count() FROM otel_traces WHERE TraceId IN " + ids;
        long deadline = System.nanoTime() + LANDING_TIMEOUT.toNanos();
        while (Long.parseLong(s.query(countSql).single()) < spans) {
          if (System.nanoTime() > deadline || (ingester != null && ingester.failure() != null)) {
            throw new IllegalStateException("the spans did not land in the store within " + LANDING_TIMEOUT.toSeconds() + " s"
                + (ingester != null && ingester.failure() != null ? ": " + ingester.failure() : "; see " + services.log(LocalServices.INGEST)));
          }
          Thread.sleep(50);
        }
        out.printf("the %s ingested them into otel_traces in %d ms (Kafka -> ingester -> ClickHouse)%n%n",
            ingester == null ? "ingester service" : "ingester", (System.nanoTime() - t0) / 1_000_000);
      } finally {
        if (ingester != null) {
          ingester.close();
        }
      }
      printLanded(s, generated, ids, out);
    } finally {
      if (ownBroker != null) {
        ownBroker.stop(Duration.ofSeconds(20));
        deleteRecursively(brokerDir);
      }
    }
    return 0;
  }

  private static void printLanded(ClickHouseStore s, List<DemoTraces.Request> generated, String ids, PrintWriter out) {
    out.println("-- spans per request and layer");
    ResultPrinter.print(s.query(
        "SELECT TraceId, ResourceAttributes['llmlat.layer'] AS layer, count() AS spans,"
            + " round(sum(Duration) / 1e6, 3) AS total_ms"
            + " FROM otel_traces WHERE TraceId IN " + ids
            + " GROUP BY TraceId, layer ORDER BY min(Timestamp), TraceId, layer"), ResultPrinter.Format.table, out);
    out.println();
    out.println("-- the first request, span by span");
    ResultPrinter.print(s.query(
        "SELECT formatDateTime(Timestamp, '%H:%i:%S.%f') AS start, ServiceName, ResourceAttributes['llmlat.layer'] AS layer,"
            + " SpanName, SpanKind, round(Duration / 1e6, 3) AS ms"
            + " FROM otel_traces WHERE TraceId = '" + generated.get(0).traceIdHex() + "' ORDER BY Timestamp, SpanName"),
        ResultPrinter.Format.table, out);
    out.println();
    out.println("-- GPU steps and the requests they served (links)");
    ResultPrinter.print(s.query(
        "SELECT SpanId AS step, SpanAttributes['llmlat.step.batch_size'] AS batch, length(Links.TraceId) AS requests,"
            + " round(Duration / 1e6, 3) AS ms FROM otel_traces"
            + " WHERE ResourceAttributes['llmlat.layer'] = 'gpu' AND TraceId IN " + ids
            + " ORDER BY Timestamp"), ResultPrinter.Format.table, out);
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
