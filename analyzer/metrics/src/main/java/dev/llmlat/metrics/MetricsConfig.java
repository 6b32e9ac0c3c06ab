package dev.llmlat.metrics;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * Where attribution metrics go and how many series they may hold, validated once. Build with {@link
 * #builder(String)}; with neither a Prometheus port nor an OTLP endpoint the metrics are recorded
 * nowhere.
 *
 * @param serviceName the {@code service.name} of the exporting process ({@code llmlat-analyze})
 * @param prometheusHost the address the scrape endpoint listens on (loopback unless asked
 *     otherwise)
 * @param prometheusPort the scrape endpoint's port ({@code GET /metrics}); null: no endpoint
 * @param otlpEndpoint where OTLP/HTTP (protobuf) metrics are sent; a URL without a path gets {@code
 *     /v1/metrics}, as OpenTelemetry's base endpoint does; null: none
 * @param otlpInterval how often metrics are sent to the OTLP endpoint (and once more at close)
 * @param maxSeries the attribute sets (service, model, engine instance, tenant) each instrument
 *     keeps apart; later ones are merged into its {@code otel.metric.overflow=true} series
 * @param slo the objectives violations are counted against
 */
public record MetricsConfig(
    String serviceName,
    String prometheusHost,
    Integer prometheusPort,
    URI otlpEndpoint,
    Duration otlpInterval,
    int maxSeries,
    SloThresholds slo) {

  public static final String LOOPBACK = "127.0.0.1";
  public static final String OTLP_METRICS_PATH = "/v1/metrics";
  public static final int DEFAULT_MAX_SERIES = 1000;
  public static final Duration DEFAULT_OTLP_INTERVAL = Duration.ofSeconds(10);

  public MetricsConfig {
    Objects.requireNonNull(slo, "slo");
    Objects.requireNonNull(otlpInterval, "otlpInterval");
    if (serviceName == null || serviceName.isBlank()) {
      throw new IllegalArgumentException("the metrics' service name must not be empty");
    }
    if (prometheusHost == null || prometheusHost.isBlank()) {
      throw new IllegalArgumentException("the metrics endpoint's host must not be empty");
    }
    if (prometheusPort != null && (prometheusPort < 1 || prometheusPort > 65_535)) {
      throw new IllegalArgumentException(
          "the metrics port must be 1 to 65535, got " + prometheusPort);
    }
    if (otlpEndpoint != null) {
      otlpEndpoint = metricsUrl(otlpEndpoint);
    }
    if (otlpInterval.toMillis() < 100 || otlpInterval.toHours() > 1) {
      throw new IllegalArgumentException(
          "the OTLP export interval must be 100 ms to 1 h, got " + otlpInterval.toMillis() + " ms");
    }
    if (maxSeries < 2 || maxSeries > 100_000) {
      throw new IllegalArgumentException(
          "the metrics' series limit must be 2 to 100000, got " + maxSeries);
    }
  }

  /** Whether anything reads the metrics. */
  public boolean exported() {
    return prometheusPort != null || otlpEndpoint != null;
  }

  private static URI metricsUrl(URI endpoint) {
    String scheme = endpoint.getScheme();
    if (!("http".equals(scheme) || "https".equals(scheme)) || endpoint.getHost() == null) {
      throw new IllegalArgumentException(
          "the OTLP metrics endpoint must be an http:// or https:// URL with a host, got '"
              + endpoint
              + "'");
    }
    String path = endpoint.getPath();
    return path == null || path.isEmpty() || path.equals("/")
        ? endpoint.resolve(OTLP_METRICS_PATH)
        : endpoint;
  }

  public static Builder builder(String serviceName) {
    return new Builder(serviceName);
  }

  public static final class Builder {
    private final String serviceName;
    private String prometheusHost = LOOPBACK;
    private Integer prometheusPort;
    private URI otlpEndpoint;
    private Duration otlpInterval = DEFAULT_OTLP_INTERVAL;
    private int maxSeries = DEFAULT_MAX_SERIES;
    private SloThresholds slo = SloThresholds.ttftOnly(SloThresholds.DEFAULT_TTFT);

    private Builder(String serviceName) {
      this.serviceName = serviceName;
    }

    public Builder prometheus(String host, Integer port) {
      this.prometheusHost = host;
      this.prometheusPort = port;
      return this;
    }

    public Builder otlp(URI endpoint) {
      this.otlpEndpoint = endpoint;
      return this;
    }

    public Builder otlpInterval(Duration interval) {
      this.otlpInterval = interval;
      return this;
    }

    public Builder maxSeries(int maxSeries) {
      this.maxSeries = maxSeries;
      return this;
    }

    public Builder slo(SloThresholds slo) {
      this.slo = slo;
      return this;
    }

    public MetricsConfig build() {
      return new MetricsConfig(
          serviceName, prometheusHost, prometheusPort, otlpEndpoint, otlpInterval, maxSeries, slo);
    }
  }
}
