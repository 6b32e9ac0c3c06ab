package dev.llmlat.agent.kafka;

import dev.llmlat.otlpkafka.KafkaSpanExporterMetrics;
import io.opentelemetry.javaagent.extension.AgentListener;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;

/**
 * Publishes the Kafka exporters' counters as OpenTelemetry metrics once the agent's SDK exists
 * (registering earlier would touch the global before the agent sets it). Exported wherever the
 * agent's metrics go; {@code otel.metrics.exporter=none} simply leaves them unread.
 */
public final class KafkaExporterMetrics implements AgentListener {
  @Override
  public void afterAgent(AutoConfiguredOpenTelemetrySdk sdk) {
    KafkaSpanExporterMetrics.register(sdk.getOpenTelemetrySdk().getMeter("dev.llmlat.agent.kafka"));
  }
}
