package dev.llmlat.engine;

import dev.llmlat.semconv.LlmlatTopics;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the demo engine is configured with, validated once.
 *
 * @param host address the HTTP server binds (loopback by default)
 * @param port HTTP port; 0 picks a free one
 * @param model model name served and reported
 * @param serviceName {@code service.name} of the engine's spans
 * @param limits the scheduler's capacity: sequences, tokens per step, KV blocks
 * @param chunkedPrefill prompts in chunks within the token budget, decodes first (vLLM v1); off:
 *     prefill-first (whole prompts; prefill steps do no decode)
 * @param timeScale wall time per modelled time: 1 is real time, 0.05 runs 20x faster
 * @param defaultMaxTokens output tokens when a request names none
 * @param costModel step durations
 * @param exporter where spans go
 * @param kafkaBootstrap Kafka bootstrap servers (for {@link ExporterKind#KAFKA})
 * @param topic Kafka topic for spans
 * @param kafkaProperties extra Kafka producer settings (security: SASL, TLS), over the defaults
 */
public record EngineConfig(
    String host,
    int port,
    String model,
    String serviceName,
    SchedulerLimits limits,
    boolean chunkedPrefill,
    double timeScale,
    int defaultMaxTokens,
    StepCostModel costModel,
    ExporterKind exporter,
    String kafkaBootstrap,
    String topic,
    Map<String, String> kafkaProperties) {

  public EngineConfig {
    kafkaProperties = Map.copyOf(kafkaProperties);
    require(host != null && !host.isBlank(), "host is required");
    require(port >= 0 && port <= 65535, "port must be 0..65535, got " + port);
    require(model != null && !model.isBlank(), "model is required");
    require(serviceName != null && !serviceName.isBlank(), "service name is required");
    Objects.requireNonNull(limits, "limits");
    require(
        timeScale > 0 && timeScale <= 100 && Double.isFinite(timeScale),
        "time scale must be in (0, 100], got " + timeScale);
    require(
        defaultMaxTokens >= 1, "default max tokens must be at least 1, got " + defaultMaxTokens);
    Objects.requireNonNull(costModel, "costModel");
    Objects.requireNonNull(exporter, "exporter");
    require(
        exporter != ExporterKind.KAFKA || (kafkaBootstrap != null && !kafkaBootstrap.isBlank()),
        "the kafka exporter needs --kafka-bootstrap");
    require(topic != null && !topic.isBlank(), "topic is required");
  }

  public static Builder builder() {
    return new Builder();
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  /**
   * Defaults: loopback:8000, model tinylm, 8 sequences, 8192 tokens per step, 2048 KV blocks of 16
   * tokens (32768 tokens), prefill-first, real time, logging exporter.
   */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port = 8000;
    private String model = "tinylm";
    private String serviceName = "llm-engine";
    private int maxNumSeqs = 8;
    private int maxNumBatchedTokens = 8192;
    private int kvBlockSize = 16;
    private int kvBlocks = 2048;
    private boolean chunkedPrefill;
    private double timeScale = 1.0;
    private int defaultMaxTokens = 16;
    private StepCostModel costModel = StepCostModel.H200_TINYLM;
    private ExporterKind exporter = ExporterKind.LOGGING;
    private String kafkaBootstrap;
    private Map<String, String> kafkaProperties = Map.of();
    private String topic = LlmlatTopics.SPANS;

    private Builder() {}

    public Builder host(String host) {
      this.host = host;
      return this;
    }

    public Builder port(int port) {
      this.port = port;
      return this;
    }

    public Builder model(String model) {
      this.model = model;
      return this;
    }

    public Builder serviceName(String serviceName) {
      this.serviceName = serviceName;
      return this;
    }

    public Builder maxNumSeqs(int seqs) {
      this.maxNumSeqs = seqs;
      return this;
    }

    public Builder maxNumBatchedTokens(int tokens) {
      this.maxNumBatchedTokens = tokens;
      return this;
    }

    public Builder kvBlockSize(int tokens) {
      this.kvBlockSize = tokens;
      return this;
    }

    public Builder kvBlocks(int blocks) {
      this.kvBlocks = blocks;
      return this;
    }

    public Builder chunkedPrefill(boolean on) {
      this.chunkedPrefill = on;
      return this;
    }

    public Builder timeScale(double timeScale) {
      this.timeScale = timeScale;
      return this;
    }

    public Builder defaultMaxTokens(int tokens) {
      this.defaultMaxTokens = tokens;
      return this;
    }

    public Builder costModel(StepCostModel costModel) {
      this.costModel = costModel;
      return this;
    }

    public Builder exporter(ExporterKind exporter) {
      this.exporter = exporter;
      return this;
    }

    public Builder kafkaBootstrap(String servers) {
      this.kafkaBootstrap = servers;
      return this;
    }

    public Builder kafkaProperties(Map<String, String> properties) {
      this.kafkaProperties = properties;
      return this;
    }

    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    public EngineConfig build() {
      return new EngineConfig(
          host,
          port,
          model,
          serviceName,
          new SchedulerLimits(maxNumSeqs, maxNumBatchedTokens, kvBlockSize, kvBlocks),
          chunkedPrefill,
          timeScale,
          defaultMaxTokens,
          costModel,
          exporter,
          kafkaBootstrap,
          topic,
          kafkaProperties);
    }
  }
}
