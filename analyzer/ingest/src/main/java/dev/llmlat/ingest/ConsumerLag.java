package dev.llmlat.ingest;

import java.util.Map;
import java.util.OptionalLong;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/** The consumer's lag as its client metrics report it. */
final class ConsumerLag {
  private static final String RECORDS_LAG_MAX = "records-lag-max";

  private ConsumerLag() {}

  /**
   * The most records any of the consumer's partitions is behind: the client-wide {@code
   * records-lag-max} (tagged with the client id alone; the per-partition ones carry the topic and
   * partition too). Empty until the consumer has fetched.
   */
  static OptionalLong max(Map<MetricName, ? extends Metric> consumerMetrics) {
    OptionalLong lag = OptionalLong.empty();
    for (Map.Entry<MetricName, ? extends Metric> m : consumerMetrics.entrySet()) {
      if (m.getKey().name().equals(RECORDS_LAG_MAX) && m.getKey().tags().size() == 1) {
        Object v = m.getValue().metricValue();
        if (v instanceof Double d && !d.isNaN()) {
          lag = OptionalLong.of(d.longValue());
        }
      }
    }
    return lag;
  }
}
