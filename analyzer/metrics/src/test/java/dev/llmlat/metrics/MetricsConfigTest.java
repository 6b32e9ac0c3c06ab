package dev.llmlat.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MetricsConfigTest {
  @Test
  void defaultsServeNothingOnLoopbackWithReportsObjective() {
    MetricsConfig c = MetricsConfig.builder("llmlat-analyze").build();
    assertThat(c.exported()).isFalse();
    assertThat(c.prometheusHost()).isEqualTo("127.0.0.1");
    assertThat(c.slo().ttft()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.slo().tpot()).isNull();
    assertThat(MetricsConfig.builder("x").prometheus("127.0.0.1", 9464).build().exported())
        .isTrue();
  }

  @Test
  void anOtlpBaseUrlGetsTheMetricsPathAndAFullOneIsKept() {
    assertThat(
            MetricsConfig.builder("x")
                .otlp(URI.create("http://collector:4318"))
                .build()
                .otlpEndpoint())
        .isEqualTo(URI.create("http://collector:4318/v1/metrics"));
    assertThat(
            MetricsConfig.builder("x")
                .otlp(URI.create("https://collector:4318/"))
                .build()
                .otlpEndpoint())
        .isEqualTo(URI.create("https://collector:4318/v1/metrics"));
    assertThat(
            MetricsConfig.builder("x")
                .otlp(URI.create("http://collector/otlp/v1/metrics"))
                .build()
                .otlpEndpoint())
        .isEqualTo(URI.create("http://collector/otlp/v1/metrics"));
  }

  @Test
  void badValuesAreRefusedNamingWhatIsWrong() {
    assertThatThrownBy(() -> MetricsConfig.builder("x").prometheus("127.0.0.1", 70_000).build())
        .hasMessageContaining("metrics port must be 1 to 65535, got 70000");
    assertThatThrownBy(
            () -> MetricsConfig.builder("x").otlp(URI.create("grpc://collector:4317")).build())
        .hasMessageContaining("http:// or https:// URL")
        .hasMessageContaining("grpc://collector:4317");
    assertThatThrownBy(() -> MetricsConfig.builder("x").maxSeries(1).build())
        .hasMessageContaining("series limit must be 2 to 100000");
    assertThatThrownBy(() -> MetricsConfig.builder("x").otlpInterval(Duration.ofMillis(5)).build())
        .hasMessageContaining("100 ms to 1 h, got 5 ms");
    assertThatThrownBy(() -> new SloThresholds(Duration.ZERO, null))
        .hasMessageContaining("TTFT objective must be above 0 ms");
    assertThatThrownBy(() -> new SloThresholds(Duration.ofMillis(1), Duration.ofMillis(-1)))
        .hasMessageContaining("TPOT objective must be above 0 ms");
  }
}
