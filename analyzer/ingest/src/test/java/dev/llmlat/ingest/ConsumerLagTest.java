package dev.llmlat.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.junit.jupiter.api.Test;

class ConsumerLagTest {
  static MetricName name(String name, Map<String, String> tags) {
    return new MetricName(name, "consumer-fetch-manager-metrics", "", tags);
  }

  static Metric metric(MetricName name, Object value) {
    return new Metric() {
      @Override
      public MetricName metricName() {
        return name;
      }

      @Override
      public Object metricValue() {
        return value;
      }
    };
  }

  static void put(Map<MetricName, Metric> metrics, MetricName name, Object value) {
    metrics.put(name, metric(name, value));
  }

  @Test
  void readsTheClientWideMaximumNotAPartitionsOwn() {
    Map<MetricName, Metric> metrics = new LinkedHashMap<>();
    put(
        metrics,
        name("records-lag-max", Map.of("client-id", "c", "topic", "otlp_spans", "partition", "0")),
        900.0);
    put(metrics, name("records-lag-max", Map.of("client-id", "c")), 1234.0);
    put(metrics, name("records-lag", Map.of("client-id", "c")), 5.0);
    assertThat(ConsumerLag.max(metrics)).isEqualTo(OptionalLong.of(1234));
  }

  @Test
  void isUnknownBeforeTheFirstFetch() {
    Map<MetricName, Metric> metrics = new LinkedHashMap<>();
    put(metrics, name("records-lag-max", Map.of("client-id", "c")), Double.NaN);
    assertThat(ConsumerLag.max(metrics)).isEmpty();
    assertThat(ConsumerLag.max(Map.of())).isEmpty();
  }
}
