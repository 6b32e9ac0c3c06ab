package dev.llmlat.agent.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.agent.it.TestBroker;
import dev.llmlat.otlpkafka.ExporterStats;
import dev.llmlat.otlpkafka.KafkaSpanExporter;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import io.opentelemetry.sdk.autoconfigure.spi.internal.DefaultConfigProperties;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code otel.exporter.kafka.config.file} reaches the exporter's producer: against a real broker, a
 * file that limits the request size makes every send fail (counted), the same exporter without it
 * delivers; an unreadable file is refused naming it.
 */
class KafkaExporterSettingsFileTest {
  @TempDir Path dir;

  private static ExporterStats exportOneTrace(KafkaSpanExporter exporter) throws Exception {
    // not closed: closing the provider would shut the exporter down before it sent
    SdkTracerProvider tracing =
        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
    Tracer tracer = tracing.get("test");
    tracer.spanBuilder("root").setAttribute("padding", "x".repeat(2000)).startSpan().end();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (exporter.stats().spansSent() + exporter.stats().spansDropped() < 1
        && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    return exporter.stats();
  }

  private KafkaSpanExporter fromProperties(Map<String, String> properties) {
    return (KafkaSpanExporter)
        new KafkaSpanExporterProvider()
            .createExporter(DefaultConfigProperties.createFromMap(properties));
  }

  @Test
  void theFilesSettingsReachTheProducer() throws Exception {
    TestBroker broker = TestBroker.shared();
    broker.ensureRunning();
    Path file =
        Files.writeString(
            dir.resolve("producer.properties"),
            "# far below one record of this trace\nmax.request.size=512\n");
    KafkaSpanExporter limited =
        fromProperties(
            Map.of(
                "otel.exporter.kafka.bootstrap.servers",
                broker.bootstrapServers(),
                "otel.exporter.kafka.config.file",
                file.toString()));
    try {
      ExporterStats stats = exportOneTrace(limited);
      assertThat(stats.spansDroppedSendFailed()).as("%s", stats).isEqualTo(1);
      assertThat(stats.spansSent()).isZero();
    } finally {
      limited.shutdown().join(10, TimeUnit.SECONDS);
    }
    KafkaSpanExporter plain =
        fromProperties(Map.of("otel.exporter.kafka.bootstrap.servers", broker.bootstrapServers()));
    try {
      assertThat(exportOneTrace(plain).spansSent()).isEqualTo(1);
    } finally {
      plain.shutdown().join(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void anUnreadableFileIsRefusedNamingIt() {
    Path missing = dir.resolve("missing.properties");
    assertThatThrownBy(
            () -> fromProperties(Map.of("otel.exporter.kafka.config.file", missing.toString())))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("otel.exporter.kafka.config.file")
        .hasMessageContaining(missing.toString());
  }

  @Test
  void keysTheExporterOwnsAreRefusedFromTheFileAndFromProperties() throws Exception {
    Path file =
        Files.writeString(
            dir.resolve("owned.properties"),
            "security.protocol=PLAINTEXT\nbootstrap.servers=elsewhere:9092\n");
    assertThatThrownBy(
            () -> fromProperties(Map.of("otel.exporter.kafka.config.file", file.toString())))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("must not set bootstrap.servers");
    assertThatThrownBy(
            () ->
                fromProperties(
                    Map.of("otel.exporter.kafka.producer.properties", "value.serializer=x.Y")))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("otel.exporter.kafka.producer.properties")
        .hasMessageContaining("must not set value.serializer");
  }
}
