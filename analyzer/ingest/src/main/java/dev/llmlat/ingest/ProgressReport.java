package dev.llmlat.ingest;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingester's progress line, logged every {@code interval} (never when it is zero): the rate
 * since the last line, the totals, and the consumer lag, which it also keeps in the metrics.
 */
final class ProgressReport {
  private static final Logger LOG = LoggerFactory.getLogger(ProgressReport.class);

  private final long intervalNanos;
  private final IngestMetrics metrics;
  private long lastNanos;
  private long spansAtLast;

  ProgressReport(Duration interval, IngestMetrics metrics, long startNanos) {
    this.intervalNanos = interval.toNanos();
    this.metrics = metrics;
    this.lastNanos = startNanos;
  }

  /**
   * Logs the line if one is due at {@code nowNanos} ({@link System#nanoTime()}); returns it then.
   */
  Optional<String> maybeLog(
      long nowNanos, Supplier<Map<MetricName, ? extends Metric>> consumerMetrics) {
    if (intervalNanos == 0 || nowNanos - lastNanos < intervalNanos) {
      return Optional.empty();
    }
    long spans = metrics.spans.get();
    double spansPerSecond = (spans - spansAtLast) / ((nowNanos - lastNanos) / 1e9);
    lastNanos = nowNanos;
    spansAtLast = spans;
    ConsumerLag.max(consumerMetrics.get()).ifPresent(lag -> metrics.lag = lag);
    String line = line(spansPerSecond, metrics.snapshot());
    LOG.info(line);
    return Optional.of(line);
  }

  static String line(double spansPerSecond, IngestMetrics.Snapshot s) {
    return String.format(
        "ingest: %,.0f spans/s; total %,d spans, %,d kernels, %,d dead-lettered, %,d batches;"
            + " pending %,d spans (%d batches inserting); lag %s; store retries %,d; waited for the store %,d ms",
        spansPerSecond,
        s.spans(),
        s.kernels(),
        s.deadLettered(),
        s.batches(),
        s.pendingSpans(),
        s.insertsInFlight(),
        s.lag() < 0 ? "?" : String.format("%,d", s.lag()),
        s.insertRetries(),
        s.storeWaitMillis());
  }
}
