package dev.llmlat.agent.kafka;

import dev.llmlat.otlpkafka.KafkaSpanExporter;
import dev.llmlat.otlpkafka.KafkaSpanExporterBuilder;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.opentelemetry.sdk.autoconfigure.spi.traces.ConfigurableSpanExporterProvider;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Map;

/**
 * {@code otel.traces.exporter=kafka}. Settings (system properties, or the environment variables
 * named the usual way, e.g. {@code OTEL_EXPORTER_KAFKA_BOOTSTRAP_SERVERS}):
 *
 * <ul>
 *   <li>{@code otel.exporter.kafka.bootstrap.servers} (default {@code localhost:9092})
 *   <li>{@code otel.exporter.kafka.topic} (default {@code otlp_spans})
 *   <li>{@code otel.exporter.kafka.queue.size} traces (default 2048)
 *   <li>{@code otel.exporter.kafka.max.block} (default {@code 1s})
 *   <li>{@code otel.exporter.kafka.log.interval} (default {@code 60s})
 *   <li>{@code otel.exporter.kafka.compression} {@code none|gzip} (default {@code none})
 *   <li>{@code otel.exporter.kafka.buffer.memory} bytes (default 8 MiB)
 *   <li>{@code otel.exporter.kafka.config.file}: a Java properties file of producer settings, e.g.
 *       {@code security.protocol}, {@code sasl.mechanism}, {@code sasl.jaas.config}, {@code
 *       ssl.truststore.location} (secrets belong here, not on the command line)
 *   <li>{@code otel.exporter.kafka.producer.properties}: extra producer settings, {@code k=v,k=v},
 *       applied after the file
 * </ul>
 */
public final class KafkaSpanExporterProvider implements ConfigurableSpanExporterProvider {
  static final String PREFIX = "otel.exporter.kafka.";

  /** The exporter's name in {@code otel.traces.exporter}. */
  static final String NAME = "kafka";

  @Override
  public String getName() {
    return NAME;
  }

  @Override
  public SpanExporter createExporter(ConfigProperties config) {
    KafkaSpanExporterBuilder builder =
        KafkaSpanExporter.builder()
            .setBootstrapServers(
                config.getString(
                    PREFIX + "bootstrap.servers",
                    KafkaSpanExporterBuilder.DEFAULT_BOOTSTRAP_SERVERS))
            .setTopic(config.getString(PREFIX + "topic", KafkaSpanExporterBuilder.DEFAULT_TOPIC))
            .setQueueCapacity(config.getInt(PREFIX + "queue.size", 2048))
            .setMaxBlock(config.getDuration(PREFIX + "max.block", Duration.ofSeconds(1)))
            .setLogInterval(config.getDuration(PREFIX + "log.interval", Duration.ofMinutes(1)))
            .setCompression(compression(config.getString(PREFIX + "compression", "none")))
            .setBufferMemoryBytes(config.getLong(PREFIX + "buffer.memory", 8L << 20));
    String file = config.getString(PREFIX + "config.file");
    if (file != null && !file.isBlank()) {
      try {
        builder.loadProducerProperties(Paths.get(file.trim()));
      } catch (IllegalArgumentException e) {
        throw new ConfigurationException(PREFIX + "config.file: " + e.getMessage(), e);
      }
    }
    for (Map.Entry<String, String> property :
        config.getMap(PREFIX + "producer.properties").entrySet()) {
      try {
        builder.putProducerProperty(property.getKey(), property.getValue());
      } catch (IllegalArgumentException e) {
        throw new ConfigurationException(PREFIX + "producer.properties: " + e.getMessage(), e);
      }
    }
    return builder.build();
  }

  // The extension jar carries no native codec: only what the JDK can do.
  private static String compression(String value) {
    if (!"none".equals(value) && !"gzip".equals(value)) {
      throw new ConfigurationException(PREFIX + "compression must be none or gzip, got " + value);
    }
    return value;
  }
}
