package dev.llmlat.agent.kafka;

import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizer;
import io.opentelemetry.sdk.autoconfigure.spi.AutoConfigurationCustomizerProvider;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import java.util.Map;

/**
 * When spans go to Kafka, leaves the process's command line out of the resource unless the user
 * chose the resource's disabled keys themselves ({@code otel.resource.disabled.keys}, even empty).
 * Each Kafka record carries one trace with its whole resource (a record is self-contained, keyed by
 * trace), so the command line (a gateway's class path: kilobytes) was sent with every request,
 * where the OTLP exporter sends it once per batch; it can also hold secrets passed as flags, and
 * nothing in llmlat reads it.
 */
public final class KafkaResourceDefaults implements AutoConfigurationCustomizerProvider {
  static final String DISABLED_KEYS = "otel.resource.disabled.keys";
  static final String COMMAND_LINE_KEYS = "process.command_line,process.command_args";

  @Override
  public void customize(AutoConfigurationCustomizer autoConfiguration) {
    autoConfiguration.addPropertiesCustomizer(KafkaResourceDefaults::defaults);
  }

  static Map<String, String> defaults(ConfigProperties config) {
    boolean toKafka =
        config.getList("otel.traces.exporter").contains(KafkaSpanExporterProvider.NAME);
    if (!toKafka || config.getString(DISABLED_KEYS) != null) {
      return Map.of();
    }
    return Map.of(DISABLED_KEYS, COMMAND_LINE_KEYS);
  }
}
