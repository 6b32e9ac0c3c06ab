package dev.llmlat.cli;

import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.otlpkafka.KafkaClientWarnings;
import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.DiskSpace;
import dev.llmlat.services.DiskWatch;
import dev.llmlat.services.LocalServices;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.StoreConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "ingest",
    mixinStandardHelpOptions = true,
    description = {
      "Consumes OTLP spans from Kafka into the store until SIGTERM.",
      "Spans to otel_traces, GPU kernel spans to gpu_kernels, undecodable records to otlp_spans_dlq. Offsets are",
      "committed only after the store acknowledged; a batch retried after a crash is not stored twice.",
      "Logs progress every few seconds. Several ingesters in one --group share the topic's partitions; when one",
      "dies the others take its partitions over after --session-timeout-ms, without loss or duplicates."
    })
final class IngestCommand implements Callable<Integer> {
  @Mixin StoreOptions store;
  @Mixin KafkaOptions kafka;

  @Option(
      names = "--topic",
      defaultValue = LlmlatTopics.SPANS,
      description = "Span topic. Default: ${DEFAULT-VALUE}.")
  String topic;

  @Option(
      names = "--group",
      defaultValue = "llmlat-ingest",
      description = "Consumer group. Default: ${DEFAULT-VALUE}.")
  String group;

  @Option(
      names = "--max-batch-spans",
      defaultValue = "50000",
      description = "Spans per insert at most. Default: ${DEFAULT-VALUE}.")
  int maxBatchSpans;

  @Option(
      names = "--linger-ms",
      defaultValue = "500",
      description = "Longest a span waits for its batch. Default: ${DEFAULT-VALUE}.")
  long lingerMs;

  @Option(
      names = "--session-timeout-ms",
      defaultValue = "10000",
      description =
          "How long the group waits for a silent ingester before its partitions move to the others. Default: ${DEFAULT-VALUE}.")
  long sessionTimeoutMs;

  @Option(
      names = "--report-interval-ms",
      defaultValue = "5000",
      description = "How often the progress line is logged (0: never). Default: ${DEFAULT-VALUE}.")
  long reportIntervalMs;

  @Option(
      names = "--instance-id",
      description =
          "Static group member id: restarted with the same id, the ingester takes its"
              + " partitions back at once (no session-timeout wait).")
  String instanceId;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    IngesterConfig config =
        IngesterConfig.builder(kafka.required())
            .topic(topic)
            .groupId(group)
            .maxBatchSpans(maxBatchSpans)
            .linger(Duration.ofMillis(lingerMs))
            .sessionTimeout(Duration.ofMillis(sessionTimeoutMs))
            .reportInterval(Duration.ofMillis(reportIntervalMs))
            .instanceId(instanceId)
            .kafkaClient(kafka.clientProperties())
            .build();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<Path> dirs = diskDirs(config.bootstrapServers());
    DiskSpace.require(dirs, DiskSpace.RUNNING_MIN_FREE, "the ingester");
    // the store would refuse each insert, retried for ever, and a full broker disk shows as endless
    // reconnects
    try (KafkaClientWarnings warnings = KafkaClientWarnings.install(Duration.ofSeconds(30));
        DiskWatch watch = DiskWatch.start(dirs, List.of(), Duration.ofMillis(500), full -> {});
        ClickHouseStore s = store.openForWriting()) {
      SpanIngester ingester = new SpanIngester(config, s);
      dev.llmlat.runtime.process.ExitSequence.register(
          "stopping the ingester", ingester::close, 30_000);
      ingester.start();
      out.println(
          "ingesting "
              + config.topic()
              + " from "
              + config.bootstrapServers()
              + " into "
              + s.description()
              + " (group "
              + config.groupId()
              + "); stop with SIGTERM");
      out.flush();
      while (!ingester.awaitStop(Duration.ofSeconds(1))) {
        // runs until SIGTERM (the hook closes it), a failure, or a full disk
        if (watch.full() != null) {
          ingester
              .close(); // what is not stored stays uncommitted in Kafka: ingested again once there
          // is room
          err.println(
              "llmlat ingest: stopped: "
                  + watch.full().getMessage()
                  + " (the spans not yet stored stay in Kafka and are ingested again once there is room)");
          return Llmlat.EXIT_FAILURE;
        }
      }
      if (ingester.failure() != null) {
        DiskSpace.Full full = watch.explain(ingester.failure());
        err.println(
            "llmlat ingest: stopped: " + (full != null ? full.getMessage() : ingester.failure()));
        return Llmlat.EXIT_FAILURE;
      }
      return 0;
    } catch (RuntimeException e) {
      DiskSpace.Full full =
          DiskSpace.explain(e, dirs); // e.g. the store's schema could not be written
      throw full != null ? full : e;
    }
  }

  /**
   * Where the spans go on this machine: the embedded (or the services') store's data, the services'
   * broker log.
   */
  private List<Path> diskDirs(String bootstrap) {
    LlmlatHome home = LlmlatHome.fromEnvironment();
    LocalServices services = Llmlat.services(home);
    List<Path> dirs = new ArrayList<>();
    StoreConfig config = store.config();
    if (config.kind() == StoreConfig.Kind.EMBEDDED) {
      dirs.add(config.dataDir());
    } else if (services.storeUrl().filter(config.url()::equals).isPresent()) {
      dirs.add(home.clickhouseData());
    }
    if (services.kafkaBootstrap().filter(bootstrap::equals).isPresent()) {
      dirs.add(home.kafkaData());
    }
    return DiskWatch.distinct(dirs);
  }
}
