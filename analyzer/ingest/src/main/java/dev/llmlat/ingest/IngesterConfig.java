package dev.llmlat.ingest;

import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.semconv.LlmlatTopics;
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
 * @param linger ...or when its first record is this old and the store has written the batch before
 *     it (while the store writes, an old batch keeps filling up to the limits above)
 * @param reportInterval how often the progress line is logged (zero: never)
 * @param sessionTimeout how long the group waits for a silent ingester before its partitions move
 *     to the others (the broker accepts 6 s to 5 min by default)
 * @param instanceId a static group member id ({@code group.instance.id}) or null: an ingester
 *     restarted with the same id takes its partitions back at once instead of after the session
 *     timeout
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
    Duration sessionTimeout,
    String instanceId,
    KafkaClientProperties kafkaClient) {

  public IngesterConfig {
    Objects.requireNonNull(kafkaClient, "kafkaClient");
    Objects.requireNonNull(bootstrapServers, "bootstrapServers");
    if (bootstrapServers.isBlank() || !bootstrapServers.contains(":")) {
      throw new IllegalArgumentException(
          "Kafka bootstrap servers must be host:port[,host:port], got '" + bootstrapServers + "'");
    }
    if (topic == null || !topic.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new IllegalArgumentException("not a Kafka topic name: '" + topic + "'");
    }
    if (groupId == null || groupId.isBlank()) {
      throw new IllegalArgumentException("the consumer group id must not be empty");
    }
    if (maxBatchSpans < 1 || maxBatchBytes < 1024) {
      throw new IllegalArgumentException(
          "batch bounds must be >= 1 span and >= 1024 bytes, got "
              + maxBatchSpans
              + " spans, "
              + maxBatchBytes
              + " bytes");
    }
    if (linger.isNegative() || linger.isZero() || reportInterval.isNegative()) {
      throw new IllegalArgumentException(
          "linger must be positive and the report interval not negative");
    }
    if (sessionTimeout.toMillis() < 1000 || sessionTimeout.toMinutes() > 30) {
      throw new IllegalArgumentException(
          "the session timeout must be 1 s to 30 min, got " + sessionTimeout.toMillis() + " ms");
    }
    if (instanceId != null && !instanceId.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new IllegalArgumentException(
          "the instance id must be 1-200 of A-Z a-z 0-9 . _ -, got '" + instanceId + "'");
    }
  }

  public String deadLetterTopic() {
    return LlmlatTopics.deadLetterTopic(topic);
  }

  public static Builder builder(String bootstrapServers) {
    return new Builder(bootstrapServers);
  }

  public static final class Builder {
    private final String bootstrapServers;
    private String topic = LlmlatTopics.SPANS;
    private String groupId = "llmlat-ingest";
    private int maxBatchSpans = 50_000;
    private int maxBatchBytes = 32 << 20;
    private Duration linger = Duration.ofMillis(500);
    private Duration reportInterval = Duration.ofSeconds(5);
    // Kafka's 45 s default leaves a dead ingester's partitions unread that long; 10 s still
    // rides out a long GC pause (heartbeats run on their own thread).
    private Duration sessionTimeout = Duration.ofSeconds(10);
    private String instanceId;
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

    public Builder sessionTimeout(Duration sessionTimeout) {
      this.sessionTimeout = sessionTimeout;
      return this;
    }

    public Builder instanceId(String instanceId) {
      this.instanceId = instanceId;
      return this;
    }

    public Builder kafkaClient(KafkaClientProperties kafkaClient) {
      this.kafkaClient = kafkaClient;
      return this;
    }

    public IngesterConfig build() {
      return new IngesterConfig(
          bootstrapServers,
          topic,
          groupId,
          maxBatchSpans,
          maxBatchBytes,
          linger,
          reportInterval,
          sessionTimeout,
          instanceId,
          kafkaClient);
    }
  }
}
