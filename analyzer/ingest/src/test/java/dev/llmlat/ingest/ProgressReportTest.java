package dev.llmlat.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.junit.jupiter.api.Test;

class ProgressReportTest {
  private static final long S = 1_000_000_000L;
  private final IngestMetrics metrics = new IngestMetrics();
  private final Map<MetricName, Metric> consumerMetrics = new LinkedHashMap<>();

  void lag(double records) {
    MetricName name = ConsumerLagTest.name("records-lag-max", Map.of("client-id", "c"));
    consumerMetrics.put(name, ConsumerLagTest.metric(name, records));
  }

  @Test
  void logsEveryIntervalTheRateSinceTheLastLineAndTheLag() {
    ProgressReport report = new ProgressReport(Duration.ofSeconds(5), metrics, 100 * S);
    lag(42);
    metrics.spans.set(50);
    assertThat(report.maybeLog(104 * S, () -> consumerMetrics)).isEmpty(); // not due yet
    assertThat(metrics.snapshot().lag()).isEqualTo(-1);

    metrics.spans.set(100);
    assertThat(report.maybeLog(105 * S, () -> consumerMetrics))
        .hasValueSatisfying(
            line ->
                assertThat(line)
                    .startsWith("ingest: 20 spans/s; total 100 spans,")
                    .contains("lag 42;"));
    assertThat(metrics.snapshot().lag()).isEqualTo(42);

    metrics.spans.set(400);
    lag(7);
    assertThat(report.maybeLog(108 * S, () -> consumerMetrics)).isEmpty();
    assertThat(report.maybeLog(115 * S, () -> consumerMetrics))
        .hasValueSatisfying(
            line ->
                assertThat(line)
                    .startsWith("ingest: 30 spans/s; total 400 spans,")
                    .contains("lag 7;"));
  }

  @Test
  void aZeroIntervalNeverLogsNorReadsTheLag() {
    ProgressReport report = new ProgressReport(Duration.ZERO, metrics, 0);
    lag(42);
    assertThat(report.maybeLog(1_000 * S, () -> consumerMetrics)).isEmpty();
    assertThat(metrics.snapshot().lag()).isEqualTo(-1);
  }

  @Test
  void anUnknownLagReadsAsAQuestionMark() {
    assertThat(ProgressReport.line(0, metrics.snapshot())).contains("lag ?;");
  }
}
