package dev.llmlat.metrics;

import dev.llmlat.attribution.Attribution;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.exporter.prometheus.PrometheusHttpServer;
import io.opentelemetry.sdk.metrics.ExemplarFilter;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.SdkMeterProviderBuilder;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.opentelemetry.sdk.resources.Resource;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The OpenTelemetry SDK set up for attribution metrics: one meter provider with {@link
 * AttributionViews}, read by the SDK's Prometheus HTTP server ({@code GET /metrics}, cumulative)
 * and by a periodic OTLP/HTTP exporter, as the {@link MetricsConfig} asks, and the {@link
 * AttributionRecorder} over it.
 *
 * <p>Lifecycle: {@link #start} binds the endpoint and starts the exporter's thread; {@link #close}
 * sends what is left over OTLP and stops both.
 */
public final class MetricsExport implements AutoCloseable {
  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
  private static final long CLOSE_TIMEOUT_S = 10;

  private final MetricsConfig config;
  private final SdkMeterProvider provider; // null: nothing to export, no SDK set up
  private final AttributionRecorder recorder;
  private final AtomicBoolean closed = new AtomicBoolean();

  private MetricsExport(MetricsConfig config, SdkMeterProvider provider) {
    this.config = config;
    this.provider = provider;
    this.recorder =
        provider == null
            ? null
            : new AttributionRecorder(provider.get(AttributionRecorder.SCOPE), config.slo());
  }

  /**
   * Starts the endpoint and the exporter {@code config} names; with neither, records nothing and
   * sets up no SDK (the commands that take these options start no slower for them).
   *
   * @throws IllegalArgumentException when the endpoint cannot listen where asked (the port is
   *     taken)
   */
  public static MetricsExport start(MetricsConfig config) {
    if (!config.exported()) {
      return new MetricsExport(config, null);
    }
    SdkMeterProviderBuilder builder =
        SdkMeterProvider.builder()
            .setResource(
                Resource.getDefault()
                    .merge(Resource.create(Attributes.of(SERVICE_NAME, config.serviceName()))))
            .setExemplarFilter(ExemplarFilter.traceBased());
    AttributionViews.register(builder, config.maxSeries());
    if (config.prometheusPort() != null) {
      try {
        builder.registerMetricReader(
            PrometheusHttpServer.builder()
                .setHost(config.prometheusHost())
                .setPort(config.prometheusPort())
                .build());
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            "cannot serve metrics on "
                + config.prometheusHost()
                + ":"
                + config.prometheusPort()
                + ": "
                + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()),
            e);
      }
    }
    if (config.otlpEndpoint() != null) {
      builder.registerMetricReader(
          PeriodicMetricReader.builder(
                  OtlpHttpMetricExporter.builder()
                      .setEndpoint(config.otlpEndpoint().toString())
                      .build())
              .setInterval(config.otlpInterval())
              .build());
    }
    return new MetricsExport(config, builder.build());
  }

  public MetricsConfig config() {
    return config;
  }

  /**
   * Records one attribution ({@link AttributionRecorder#record}); nothing when nothing is exported.
   */
  public void record(Attribution attribution) {
    if (recorder != null) {
      recorder.record(attribution);
    }
  }

  /**
   * What the endpoint and exporter serve, for a person: {@code "http://127.0.0.1:9464/metrics, OTLP
   * to ..."}.
   */
  public String description() {
    StringBuilder out = new StringBuilder();
    if (config.prometheusPort() != null) {
      out.append("http://")
          .append(config.prometheusHost())
          .append(':')
          .append(config.prometheusPort())
          .append("/metrics");
    }
    if (config.otlpEndpoint() != null) {
      out.append(out.isEmpty() ? "" : ", ").append("OTLP to ").append(config.otlpEndpoint());
    }
    return out.isEmpty() ? "nowhere" : out.toString();
  }

  /**
   * Sends what is left over OTLP and stops the endpoint; once (the exit sequence and the command
   * may both close it).
   */
  @Override
  public void close() {
    if (provider != null && closed.compareAndSet(false, true)) {
      provider.shutdown().join(CLOSE_TIMEOUT_S, TimeUnit.SECONDS);
    }
  }
}
