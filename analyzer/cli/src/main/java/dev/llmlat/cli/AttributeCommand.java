package dev.llmlat.cli;

import dev.llmlat.live.LiveAttributor;
import dev.llmlat.live.LiveConfig;
import dev.llmlat.metrics.MetricsExport;
import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "attribute",
    mixinStandardHelpOptions = true,
    description = {
      "With --live: attributes requests as their spans stream in, until SIGTERM (Kafka Streams).",
      "A request is attributed once its engine request span is in and no span of it came for",
      "--grace; a span arriving later (within --retention) attributes it again, and the new row",
      "replaces the old: one row per request in llm_request_attribution, from the same core as",
      "`llmlat analyze`. Instances with the same --application-id share the topic's partitions;",
      "their state survives restarts in changelog topics. GPU exports imported into the store",
      "afterwards: `llmlat analyze --all --since ...` attributes their requests again. Each request's first",
      "attribution is recorded on OpenTelemetry metrics (--metrics-port, --metrics-otlp-endpoint)."
    })
final class AttributeCommand implements Callable<Integer> {
  @Mixin StoreOptions store;
  @Mixin KafkaOptions kafka;
  @Mixin MetricsOptions metrics;

  @Option(
      names = "--live",
      required = true,
      description =
          "Attribute continuously from the span topic (batch attribution is `llmlat analyze`).")
  boolean live;

  @Option(
      names = "--topic",
      defaultValue = LlmlatTopics.SPANS,
      description = "Span topic. Default: ${DEFAULT-VALUE}.")
  String topic;

  @Option(
      names = "--application-id",
      defaultValue = LiveConfig.DEFAULT_APPLICATION_ID,
      description =
          "Kafka Streams application id: instances with the same id share the work. Default: ${DEFAULT-VALUE}.")
  String applicationId;

  @Option(
      names = "--grace",
      paramLabel = "DURATION",
      defaultValue = "5s",
      description =
          "Quiet time after a request's last span before it is attributed. Default: ${DEFAULT-VALUE}.")
  String grace;

  @Option(
      names = "--retention",
      paramLabel = "DURATION",
      defaultValue = "10m",
      description =
          "How long an attributed request's spans are kept for late spans. Default: ${DEFAULT-VALUE}.")
  String retention;

  @Option(
      names = "--state-dir",
      paramLabel = "DIR",
      description =
          "Where the state stores live (rebuilt from Kafka when lost). Default: $LLMLAT_HOME/data/live.")
  Path stateDir;

  @Option(
      names = "--session-timeout-ms",
      defaultValue = "10000",
      description =
          "How long the group waits for a silent instance before its partitions move to the others. Default: ${DEFAULT-VALUE}.")
  long sessionTimeoutMs;

  @Option(
      names = "--report-interval-ms",
      defaultValue = "5000",
      description = "How often the progress line is logged (0: never). Default: ${DEFAULT-VALUE}.")
  long reportIntervalMs;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    Path dir =
        stateDir != null
            ? stateDir
            : LlmlatHome.fromEnvironment().root().resolve("data").resolve("live");
    LiveConfig config =
        LiveConfig.builder(kafka.required(), dir)
            .topic(topic)
            .applicationId(applicationId)
            .grace(Durations.parse(grace))
            .retention(Durations.parse(retention))
            .sessionTimeout(Duration.ofMillis(sessionTimeoutMs))
            .reportInterval(Duration.ofMillis(reportIntervalMs))
            .kafkaClient(kafka.clientProperties())
            .build();
    PrintWriter out = spec.commandLine().getOut();
    try (MetricsExport m = MetricsExport.start(metrics.config("llmlat-attribute"));
        ClickHouseStore s = store.openForWriting()) {
      dev.llmlat.runtime.process.ExitSequence.register(
          "sending the last metrics", m::close, 15_000); // runs after the attributor stops
      LiveAttributor attributor = new LiveAttributor(config, s, m::record);
      dev.llmlat.runtime.process.ExitSequence.register(
          "stopping live attribution", attributor::close, 60_000);
      attributor.start();
      out.println(
          "attributing "
              + config.topic()
              + " from "
              + config.bootstrapServers()
              + " into "
              + s.description()
              + " (application "
              + config.applicationId()
              + ", grace "
              + config.grace().toMillis()
              + " ms, state in "
              + dir
              + (m.config().exported() ? "; metrics " + m.description() : "")
              + "); stop with SIGTERM");
      out.flush();
      while (!attributor.awaitStop(Duration.ofSeconds(1))) {
        // runs until SIGTERM (the exit sequence closes it) or a failure
      }
      if (attributor.failure() != null) {
        spec.commandLine().getErr().println("llmlat attribute: stopped: " + attributor.failure());
        return Llmlat.EXIT_FAILURE;
      }
      return 0;
    }
  }
}
