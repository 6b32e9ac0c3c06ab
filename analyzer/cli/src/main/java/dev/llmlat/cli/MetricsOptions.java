package dev.llmlat.cli;

import dev.llmlat.load.Slo;
import dev.llmlat.metrics.MetricsConfig;
import dev.llmlat.metrics.SloThresholds;
import java.net.URI;
import picocli.CommandLine.Option;

/**
 * Where the attribution metrics go (OpenTelemetry: a Prometheus scrape endpoint, OTLP) and what
 * they count as a violation.
 */
final class MetricsOptions {
  @Option(
      names = "--metrics-port",
      paramLabel = "PORT",
      description =
          "Serve the attribution metrics at http://HOST:PORT/metrics for Prometheus (the OpenTelemetry "
              + "SDK's exporter; OpenMetrics, with exemplars naming trace ids, to a scraper that asks for it): "
              + "exponential histograms llmlat.request.ttft, llmlat.request.ttft.component and "
              + "llmlat.request.itl, counters llmlat.slo.violations and llmlat.queue.time, by service, model, "
              + "engine instance and tenant. Up while the command runs (a one-shot analyze: use --follow, or OTLP). "
              + "Default: none.")
  Integer port;

  @Option(
      names = "--metrics-host",
      paramLabel = "ADDRESS",
      defaultValue = MetricsConfig.LOOPBACK,
      description =
          "The address --metrics-port listens on. Default: ${DEFAULT-VALUE} (this machine only).")
  String host;

  @Option(
      names = "--metrics-otlp-endpoint",
      paramLabel = "URL",
      description =
          "Send the same metrics over OTLP/HTTP (protobuf) to URL, e.g. a Collector's http://HOST:4318 "
              + "(/v1/metrics is added to a URL without a path), every --metrics-otlp-interval and once more at "
              + "exit. Default: none.")
  URI otlpEndpoint;

  @Option(
      names = "--metrics-otlp-interval",
      paramLabel = "DURATION",
      defaultValue = "10s",
      description = "How often metrics go to --metrics-otlp-endpoint. Default: ${DEFAULT-VALUE}.")
  String otlpInterval;

  @Option(
      names = "--metrics-max-series",
      paramLabel = "N",
      defaultValue = "" + MetricsConfig.DEFAULT_MAX_SERIES,
      description =
          "Series (service, model, engine instance, tenant) each metric keeps apart; measurements of more "
              + "go to its otel.metric.overflow=\"true\" series. Default: ${DEFAULT-VALUE}.")
  int maxSeries;

  @Option(
      names = "--slo-ttft",
      paramLabel = "MS",
      defaultValue = "500",
      description =
          "TTFT objective in ms: llmlat.slo.violations counts requests above it (as `llmlat report --slo-ttft`). Default: ${DEFAULT-VALUE}.")
  double sloTtft;

  @Option(
      names = "--slo-tpot",
      paramLabel = "MS",
      description =
          "Time-per-output-token objective in ms (the mean inter-token gap; equal meets it, as `llmlat load`). Default: none.")
  Double sloTpot;

  /** The validated settings, for a process whose metrics resource is {@code serviceName}. */
  MetricsConfig config(String serviceName) {
    return MetricsConfig.builder(serviceName)
        .prometheus(host, port)
        .otlp(otlpEndpoint)
        .otlpInterval(Durations.parse(otlpInterval))
        .maxSeries(maxSeries)
        .slo(
            new SloThresholds(Slo.millis(sloTtft, "--slo-ttft"), Slo.millis(sloTpot, "--slo-tpot")))
        .build();
  }
}
