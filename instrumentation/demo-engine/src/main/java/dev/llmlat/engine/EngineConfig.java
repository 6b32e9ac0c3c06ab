package dev.llmlat.engine;

import java.util.Map;
import java.util.Objects;

/**
 * Everything the demo engine is configured with, validated once.
 *
 * @param host address the HTTP server binds (loopback by default)
 * @param port HTTP port; 0 picks a free one
 * @param model model name served and reported
 * @param serviceName {@code service.name} of the engine's spans
 * @param maxBatch most requests running at once (decode batch size bound)
 * @param chunkedPrefillBudget tokens one step may compute when chunked prefill is on; 0: off
 *     (prefill-first: whole prompts, prefill steps do no decode)
 * @param kvCacheTokens KV-cache capacity in tokens; running requests past it are preempted
 * @param timeScale wall time per modelled time: 1 is real time, 0.05 runs 20x faster
 * @param defaultMaxTokens output tokens when a request names none
 * @param costModel step durations
 * @param exporter where spans go
 * @param kafkaBootstrap Kafka bootstrap servers (for {@link ExporterKind#KAFKA})
 * @param topic Kafka topic for spans
 * @param kafkaProperties extra Kafka producer settings (security: SASL, TLS), over the defaults
 */
public record EngineConfig(String host, int port, String model, String serviceName, int maxBatch,
    int chunkedPrefillBudget, int kvCacheTokens, double timeScale, int defaultMaxTokens,
    StepCostModel costModel, ExporterKind exporter, String kafkaBootstrap, String topic, Map<String, String> kafkaProperties) {

  public EngineConfig {
    kafkaProperties = Map.copyOf(kafkaProperties);
    require(host != null && !host.isBlank(), "host is required");
    require(port >= 0 && port <= 65535, "port must be 0..65535, got " + port);
    require(model != null && !model.isBlank(), "model is required");
    require(serviceName != null && !serviceName.isBlank(), "service name is required");
    require(maxBatch >= 1, "max batch must be at least 1, got " + maxBatch);
    require(chunkedPrefillBudget >= 0, "chunked-prefill budget must be 0 (off) or positive, got " + chunkedPrefillBudget);
    require(chunkedPrefillBudget == 0 || chunkedPrefillBudget >= maxBatch,
        "chunked-prefill budget " + chunkedPrefillBudget + " cannot fit one decode token per running request (max batch " + maxBatch + ")");
    require(kvCacheTokens >= 2, "KV cache must hold at least 2 tokens, got " + kvCacheTokens);
    require(timeScale > 0 && timeScale <= 100 && Double.isFinite(timeScale), "time scale must be in (0, 100], got " + timeScale);
    require(defaultMaxTokens >= 1, "default max tokens must be at least 1, got " + defaultMaxTokens);
    Objects.requireNonNull(costModel, "costModel");
    Objects.requireNonNull(exporter, "exporter");
    require(exporter != ExporterKind.KAFKA || (kafkaBootstrap != null && !kafkaBootstrap.isBlank()),
        "the kafka exporter needs --kafka-bootstrap");
    require(topic != null && !topic.isBlank(), "topic is required");
  }

  public static Builder builder() {
    return new Builder();
  }

  public boolean chunkedPrefill() {
    return chunkedPrefillBudget > 0;
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }

  /** Defaults: loopback:8000, model tinylm, batch 8, no chunking, 32768 KV tokens, real time, logging exporter. */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port = 8000;
    private String model = "tinylm";
    private String serviceName = "llm-engine";
    private int maxBatch = 8;
    private int chunkedPrefillBudget;
    private int kvCacheTokens = 32768;
    private double timeScale = 1.0;
    private int defaultMaxTokens = 16;
    private StepCostModel costModel = StepCostModel.H200_TINYLM;
    private ExporterKind exporter = ExporterKind.LOGGING;
    private String kafkaBootstrap;
    private Map<String, String> kafkaProperties = Map.of();
    private String topic = "otlp_spans";

    private Builder() {}

    public Builder host(String host) { this.host = host; return this; }
    public Builder port(int port) { this.port = port; return this; }
    public Builder model(String model) { this.model = model; return this; }
    public Builder serviceName(String serviceName) { this.serviceName = serviceName; return this; }
    public Builder maxBatch(int maxBatch) { this.maxBatch = maxBatch; return this; }
    public Builder chunkedPrefillBudget(int tokens) { this.chunkedPrefillBudget = tokens; return this; }
    public Builder kvCacheTokens(int tokens) { this.kvCacheTokens = tokens; return this; }
    public Builder timeScale(double timeScale) { this.timeScale = timeScale; return this; }
    public Builder defaultMaxTokens(int tokens) { this.defaultMaxTokens = tokens; return this; }
    public Builder costModel(StepCostModel costModel) { this.costModel = costModel; return this; }
    public Builder exporter(ExporterKind exporter) { this.exporter = exporter; return this; }
    public Builder kafkaBootstrap(String servers) { this.kafkaBootstrap = servers; return this; }
    public Builder kafkaProperties(Map<String, String> properties) { this.kafkaProperties = properties; return this; }
    public Builder topic(String topic) { this.topic = topic; return this; }

    public EngineConfig build() {
      return new EngineConfig(host, port, model, serviceName, maxBatch, chunkedPrefillBudget, kvCacheTokens,
          timeScale, defaultMaxTokens, costModel, exporter, kafkaBootstrap, topic, kafkaProperties);
    }
  }
}
