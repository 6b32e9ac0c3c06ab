package dev.llmlat.ingest;

import dev.llmlat.kafka.KafkaClientProperties;
import dev.llmlat.kafka.SpanTopics;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything the ingester needs, validated once. Build with {@link #builder(String)}.
 *
 * @param bootstrapServers Kafka's {@code host:port[,host:port]}
 * @param topic the span topic ({@code otlp_spans})
 * @param groupId the consumer group; offsets are committed there only after the store acknowledged
 * @param maxBatchSpans a batch is written when it holds this many spans...
 * @param maxBatchBytes ...or this many encoded bytes...
 * @param linger ...or when its first record is this old
 * @param reportInterval how often the progress line is logged (zero: never)
 * @param kafkaClient the user's Kafka client settings (security), for the consumer, the DLQ
 *     producer and the admin client alike
 */
public record IngesterConfig(
    String bootstrapServers,
    String topic,
    String groupId,
    int maxBatchSpans,
    int maxBatchBytes,
    Duration linger,
    Duration reportInterval,
    KafkaClientProperties kafkaClient) {

  public IngesterConfig {
    Objects.requireNonNull(kafkaClient, "kafkaClient");
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    if (bootstrapServers.isBlank() || !bootstrapServers.contains(":")) {
      throw new IllegalArgumentException("Kafka bootstrap servers must be host:port[,host:port], got '" + bootstrapServers + "'");
    }
    if (topic == null || !topic.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new IllegalArgumentException("not a Kafka topic name: '" + topic + "'");
    }
    if (groupId == null || groupId.isBlank()) {
      throw new IllegalArgumentException("the consumer group id must not be empty");
    }
    if (maxBatchSpans < 1 || maxBatchBytes < 1024) {
      throw new IllegalArgumentException("batch bounds must be >= 1 span and >= 1024 bytes, got "
          + maxBatchSpans + " spans, " + maxBatchBytes + " bytes");
    }
    if (linger.isNegative() || linger.isZero() || reportInterval.isNegative()) {
      throw new IllegalArgumentException("linger must be positive and the report interval not negative");
    }
  }

  public String deadLetterTopic() {
    return SpanTopics.deadLetterTopic(topic);
  }

  public static Builder builder(String bootstrapServers) {
    return new Builder(bootstrapServers);
  }

  public static final class Builder {
    private final String bootstrapServers;
    private String topic = SpanTopics.SPANS;
    private String groupId = "llmlat-ingest";
    private int maxBatchSpans = 50_000;
    private int maxBatchBytes = 32 << 20;
    private Duration linger = Duration.ofMillis(500);
    private Duration reportInterval = Duration.ofSeconds(5);
    private KafkaClientProperties kafkaClient = KafkaClientProperties.none();

    private Builder(String bootstrapServers) {
      this.bootstrapServers = bootstrapServers;
    }

    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    public Builder groupId(String groupId) {
      this.groupId = groupId;
      return this;
    }

    public Builder maxBatchSpans(int maxBatchSpans) {
      this.maxBatchSpans = maxBatchSpans;
      return this;
    }

    public Builder maxBatchBytes(int maxBatchBytes) {
      this.maxBatchBytes = maxBatchBytes;
      return this;
    }

    public Builder linger(Duration linger) {
      this.linger = linger;
      return this;
    }

    public Builder reportInterval(Duration reportInterval) {
      this.reportInterval = reportInterval;
      return this;
    }

    public Builder kafkaClient(KafkaClientProperties kafkaClient) {
      this.kafkaClient = kafkaClient;
      return this;
    }

    public IngesterConfig build() {
      return new IngesterConfig(bootstrapServers, topic, groupId, maxBatchSpans, maxBatchBytes, linger, reportInterval, kafkaClient);
    }
  }
}
