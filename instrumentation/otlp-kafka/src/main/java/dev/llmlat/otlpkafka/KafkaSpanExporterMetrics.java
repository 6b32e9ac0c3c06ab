package dev.llmlat.otlpkafka;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.Meter;

/**
 * The Kafka span exporters' counters as OpenTelemetry metrics: spans sent, spans dropped by reason,
 * and the depth of the queue that can fill. Registered once per process by whoever owns the meter
 * (the agent extension once the agent's SDK exists).
 */
public final class KafkaSpanExporterMetrics {
  private static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
  private static final Attributes QUEUE_FULL = Attributes.of(REASON, "queue_full");
  private static final Attributes SEND_FAILED = Attributes.of(REASON, "send_failed");

  private KafkaSpanExporterMetrics() {}

  /** Observes every live exporter of this class loader through {@code meter}. */
  public static void register(Meter meter) {
    meter
        .counterBuilder("llmlat.exporter.kafka.spans.sent")
        .setDescription("Spans in records the Kafka broker acknowledged")
        .setUnit("{span}")
        .buildWithCallback(
            m ->
                m.record(
                    KafkaSpanExporter.live().stream().mapToLong(e -> e.stats().spansSent()).sum()));
    meter
        .counterBuilder("llmlat.exporter.kafka.spans.dropped")
        .setDescription("Spans the Kafka exporter dropped, by reason")
        .setUnit("{span}")
        .buildWithCallback(
            m -> {
              long queueFull = 0;
              long sendFailed = 0;
              for (KafkaSpanExporter exporter : KafkaSpanExporter.live()) {
                ExporterStats stats = exporter.stats();
                queueFull += stats.spansDroppedQueueFull();
                sendFailed += stats.spansDroppedSendFailed();
              }
              m.record(queueFull, QUEUE_FULL);
              m.record(sendFailed, SEND_FAILED);
            });
    meter
        .upDownCounterBuilder("llmlat.exporter.kafka.queue.size")
        .setDescription("Traces waiting for the Kafka exporter's sender")
        .setUnit("{trace}")
        .buildWithCallback(
            m ->
                m.record(
                    KafkaSpanExporter.live().stream().mapToLong(e -> e.stats().queued()).sum()));
  }
}
