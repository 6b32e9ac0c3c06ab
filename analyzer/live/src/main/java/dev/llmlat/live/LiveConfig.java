package dev.llmlat.live;

import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.semconv.LlmlatTopics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything the live attributor needs, validated once. Build with {@link #builder(String, Path)}.
 *
 * @param bootstrapServers Kafka's {@code host:port[,host:port]}
 * @param topic the span topic ({@code otlp_spans})
 * @param applicationId the Kafka Streams application id: instances with the same id share the
 *     partitions; it names the consumer group and the internal topics (changelogs, repartition)
 * @param grace a trace whose request is in is complete once no span came for this long
 * @param retention an attributed trace's spans are kept this long after its last span, for late
 *     spans (which attribute it again); spans of a trace that never showed a request, as long
 * @param stateDir where the state stores live (RocksDB); rebuilt from the changelogs when lost
 * @param reportInterval how often the progress line is logged (zero: never)
 * @param sessionTimeout how long the group waits for a silent instance before its partitions move
 * @param evidencePerPair client/server exchanges kept per pair of clock domains for skew estimation
 * @param kafkaClient the user's Kafka client settings (security), for every client Streams makes
 */
public record LiveConfig(
    String bootstrapServers,
    String topic,
    String applicationId,
    Duration grace,
    Duration retention,
    Path stateDir,
    Duration reportInterval,
    Duration sessionTimeout,
    int evidencePerPair,
    KafkaClientProperties kafkaClient) {

  public static final String DEFAULT_APPLICATION_ID = "llmlat-attribution";

  public LiveConfig {
    Objects.requireNonNull(kafkaClient, "kafkaClient");
    Objects.requireNonNull(stateDir, "stateDir");
    if (bootstrapServers == null || bootstrapServers.isBlank() || !bootstrapServers.contains(":")) {
      throw new IllegalArgumentException(
          "Kafka bootstrap servers must be host:port[,host:port], got '" + bootstrapServers + "'");
    }
    if (topic == null || !topic.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new IllegalArgumentException("not a Kafka topic name: '" + topic + "'");
    }
    if (applicationId == null || !applicationId.matches("[A-Za-z0-9._-]{1,150}")) {
      throw new IllegalArgumentException(
          "the application id must be 1-150 of A-Z a-z 0-9 . _ -, got '" + applicationId + "'");
    }
    if (grace.toMillis() < 10 || grace.toMinutes() > 60) {
      throw new IllegalArgumentException(
          "the grace must be 10 ms to 60 min, got " + grace.toMillis() + " ms");
    }
    if (retention.compareTo(grace) < 0 || retention.toDays() > 7) {
      throw new IllegalArgumentException(
          "the retention must be at least the grace ("
              + grace.toMillis()
              + " ms) and at most 7 days, got "
              + retention.toMillis()
              + " ms");
    }
    if (reportInterval.isNegative()) {
      throw new IllegalArgumentException("the report interval must not be negative");
    }
    if (sessionTimeout.toMillis() < 1000 || sessionTimeout.toMinutes() > 30) {
      throw new IllegalArgumentException(
          "the session timeout must be 1 s to 30 min, got " + sessionTimeout.toMillis() + " ms");
    }
    if (evidencePerPair < 1 || evidencePerPair > 10_000) {
      throw new IllegalArgumentException(
          "evidence per clock-domain pair must be 1 to 10000, got " + evidencePerPair);
    }
  }

  /**
   * How often completion is checked: a fifth of the grace (so a trace waits at most 20% past it),
   * between 20 ms and 1 s.
   */
  public Duration punctuateEvery() {
    return Duration.ofMillis(Math.max(20, Math.min(1000, grace.toMillis() / 5)));
  }

  public static Builder builder(String bootstrapServers, Path stateDir) {
    return new Builder(bootstrapServers, stateDir);
  }

  public static final class Builder {
    private final String bootstrapServers;
    private final Path stateDir;
    private String topic = LlmlatTopics.SPANS;
    private String applicationId = DEFAULT_APPLICATION_ID;
    // exporters flush every few seconds (the OpenTelemetry SDK's batch processor: 5 s): a request's
    // layers reach the topic up to that far apart
    private Duration grace = Duration.ofSeconds(5);
    private Duration retention = Duration.ofMinutes(10);
    private Duration reportInterval = Duration.ofSeconds(5);
    private Duration sessionTimeout = Duration.ofSeconds(10);
    private int evidencePerPair = 64;
    private KafkaClientProperties kafkaClient = KafkaClientProperties.none();

    private Builder(String bootstrapServers, Path stateDir) {
      this.bootstrapServers = bootstrapServers;
      this.stateDir = stateDir;
    }

    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    public Builder applicationId(String applicationId) {
      this.applicationId = applicationId;
      return this;
    }

    public Builder grace(Duration grace) {
      this.grace = grace;
      return this;
    }

    public Builder retention(Duration retention) {
      this.retention = retention;
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

    public Builder evidencePerPair(int evidencePerPair) {
      this.evidencePerPair = evidencePerPair;
      return this;
    }

    public Builder kafkaClient(KafkaClientProperties kafkaClient) {
      this.kafkaClient = kafkaClient;
      return this;
    }

    public LiveConfig build() {
      return new LiveConfig(
          bootstrapServers,
          topic,
          applicationId,
          grace,
          retention,
          stateDir,
          reportInterval,
          sessionTimeout,
          evidencePerPair,
          kafkaClient);
    }
  }
}
