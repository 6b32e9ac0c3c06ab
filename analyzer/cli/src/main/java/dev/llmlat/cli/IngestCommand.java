package dev.llmlat.cli;

import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.time.Duration;
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

  @Option(names = "--topic", defaultValue = LlmlatTopics.SPANS, description = "Span topic. Default: ${DEFAULT-VALUE}.")
  String topic;

  @Option(names = "--group", defaultValue = "llmlat-ingest", description = "Consumer group. Default: ${DEFAULT-VALUE}.")
  String group;

  @Option(names = "--max-batch-spans", defaultValue = "50000", description = "Spans per insert at most. Default: ${DEFAULT-VALUE}.")
  int maxBatchSpans;

  @Option(names = "--linger-ms", defaultValue = "500", description = "Longest a span waits for its batch. Default: ${DEFAULT-VALUE}.")
  long lingerMs;

  @Option(names = "--session-timeout-ms", defaultValue = "10000",
      description = "How long the group waits for a silent ingester before its partitions move to the others. Default: ${DEFAULT-VALUE}.")
  long sessionTimeoutMs;

  @Option(names = "--report-interval-ms", defaultValue = "5000",
      description = "How often the progress line is logged (0: never). Default: ${DEFAULT-VALUE}.")
  long reportIntervalMs;

  @Option(names = "--instance-id", description = "Static group member id: restarted with the same id, the ingester takes its"
      + " partitions back at once (no session-timeout wait).")
  String instanceId;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    IngesterConfig config = IngesterConfig.builder(kafka.required()).topic(topic).groupId(group)
        .maxBatchSpans(maxBatchSpans).linger(Duration.ofMillis(lingerMs)).sessionTimeout(Duration.ofMillis(sessionTimeoutMs))
        .reportInterval(Duration.ofMillis(reportIntervalMs)).instanceId(instanceId).kafkaClient(kafka.clientProperties()).build();
    PrintWriter out = spec.commandLine().getOut();
    try (ClickHouseStore s = store.openForWriting()) {
      SpanIngester ingester = new SpanIngester(config, s);
      dev.llmlat.process.ExitSequence.register("stopping the ingester", ingester::close, 30_000);
      ingester.start();
      out.println("ingesting " + config.topic() + " from " + config.bootstrapServers() + " into " + s.description()
          + " (group " + config.groupId() + "); stop with SIGTERM");
      out.flush();
      while (!ingester.awaitStop(Duration.ofSeconds(1))) {
        // runs until SIGTERM (the hook closes it) or a failure
      }
      if (ingester.failure() != null) {
        spec.commandLine().getErr().println("llmlat ingest: stopped: " + ingester.failure());
        return Llmlat.EXIT_FAILURE;
      }
      return 0;
    }
  }
}
