package dev.llmlat.otlpkafka;

import dev.llmlat.otlpkafka.internal.KafkaSender;
import dev.llmlat.semconv.LlmlatTopics;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Builds a {@link KafkaSpanExporter}. Defaults suit an agent inside a latency-sensitive gateway.
 */
public final class KafkaSpanExporterBuilder {
  public static final String DEFAULT_TOPIC = LlmlatTopics.SPANS;
  public static final String DEFAULT_BOOTSTRAP_SERVERS = "localhost:9092";

  private String bootstrapServers = DEFAULT_BOOTSTRAP_SERVERS;
  private String topic = DEFAULT_TOPIC;
  private int queueCapacity = 2048;
  private Duration maxBlock = Duration.ofSeconds(1);
  private Duration logInterval = Duration.ofMinutes(1);
  private String compression = "none";
  private long bufferMemoryBytes = 8L << 20;
  private final Map<String, Object> producerProperties = new LinkedHashMap<>();

  KafkaSpanExporterBuilder() {}

  /** Comma-separated {@code host:port} list (Kafka's {@code bootstrap.servers}). */
  public KafkaSpanExporterBuilder setBootstrapServers(String bootstrapServers) {
    this.bootstrapServers = requireText(bootstrapServers, "bootstrapServers");
    return this;
  }

  public KafkaSpanExporterBuilder setTopic(String topic) {
    this.topic = requireText(topic, "topic");
    return this;
  }

  /** How many traces may wait for the sender; beyond it {@code export()} drops and counts. */
  public KafkaSpanExporterBuilder setQueueCapacity(int queueCapacity) {
    if (queueCapacity < 1) {
      throw new IllegalArgumentException("queueCapacity must be positive, got " + queueCapacity);
    }
    this.queueCapacity = queueCapacity;
    return this;
  }

  /**
   * How long the sender thread (never a request or export thread) may wait for broker metadata or
   * producer buffer space before dropping a record (Kafka's {@code max.block.ms}).
   */
  public KafkaSpanExporterBuilder setMaxBlock(Duration maxBlock) {
    this.maxBlock = requirePositive(maxBlock, "maxBlock");
    return this;
  }

  /** How often the counters are logged while anything changed. */
  public KafkaSpanExporterBuilder setLogInterval(Duration logInterval) {
    this.logInterval = requirePositive(logInterval, "logInterval");
    return this;
  }

  /**
   * Kafka's {@code compression.type}: {@code none}, {@code gzip}, or {@code snappy | lz4 | zstd}
   * where their native codec is on the class path (the agent extension ships none of them).
   */
  public KafkaSpanExporterBuilder setCompression(String compression) {
    if (!java.util.List.of("none", "gzip", "snappy", "lz4", "zstd").contains(compression)) {
      throw new IllegalArgumentException(
          "compression must be none, gzip, snappy, lz4 or zstd, got " + compression);
    }
    this.compression = compression;
    return this;
  }

  /** The producer's own buffer for records awaiting the broker (Kafka's {@code buffer.memory}). */
  public KafkaSpanExporterBuilder setBufferMemoryBytes(long bufferMemoryBytes) {
    if (bufferMemoryBytes < 64 * 1024) {
      throw new IllegalArgumentException("bufferMemoryBytes must be at least 64 KiB");
    }
    this.bufferMemoryBytes = bufferMemoryBytes;
    return this;
  }

  /**
   * Producer settings from a Java properties file (security: {@code security.protocol}, {@code
   * sasl.jaas.config}, {@code ssl.truststore.location}, ...), applied over the defaults like {@link
   * #putProducerProperty}. The values are never logged.
   *
   * @throws IllegalArgumentException naming the file when it cannot be read
   */
  public KafkaSpanExporterBuilder loadProducerProperties(java.nio.file.Path file) {
    // the one loader every Kafka client of llmlat uses: keys llmlat owns are refused here too
    KafkaClientProperties.load(file).values().forEach(this::putProducerProperty);
    return this;
  }

  /** Extra producer settings (security, timeouts), applied last. */
  public KafkaSpanExporterBuilder putProducerProperty(String key, Object value) {
    KafkaClientProperties.requireNotOwned(requireText(key, "key"), null);
    producerProperties.put(key, Objects.requireNonNull(value, "value"));
    return this;
  }

  public KafkaSpanExporter build() {
    KafkaSender.Config config =
        new KafkaSender.Config(
            bootstrapServers,
            topic,
            queueCapacity,
            maxBlock,
            logInterval,
            compression,
            bufferMemoryBytes,
            Map.copyOf(producerProperties));
    return new KafkaSpanExporter(KafkaSender.start(config));
  }

  private static String requireText(String value, String name) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " must not be empty");
    }
    return value.trim();
  }

  private static Duration requirePositive(Duration value, String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + value);
    }
    return value;
  }
}
