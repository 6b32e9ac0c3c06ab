package dev.llmlat.cli;

import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.runtime.home.LlmlatHome;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Where Kafka is: an existing cluster, or the broker `llmlat services up` runs. */
final class KafkaOptions {
  @Option(
      names = "--kafka",
      paramLabel = "HOST:PORT",
      defaultValue = "${env:LLMLAT_KAFKA}",
      description =
          "An existing Kafka cluster (bootstrap servers) instead of the broker `llmlat services up` runs. Env: LLMLAT_KAFKA.")
  String bootstrap;

  @Option(
      names = "--kafka-config",
      paramLabel = "FILE",
      defaultValue = "${env:LLMLAT_KAFKA_CONFIG}",
      description = {
        "Kafka client settings for every client llmlat creates: a Java properties file with e.g.",
        "security.protocol, sasl.mechanism, sasl.jaas.config, ssl.truststore.location. Its values are never printed.",
        "Env: LLMLAT_KAFKA_CONFIG."
      })
  Path clientConfig;

  /** The user's client settings (none unless --kafka-config / LLMLAT_KAFKA_CONFIG names a file). */
  KafkaClientProperties clientProperties() {
    return clientConfig == null || clientConfig.toString().isBlank()
        ? KafkaClientProperties.none()
        : KafkaClientProperties.load(clientConfig);
  }

  /** The bootstrap servers, or null when neither given nor running. */
  String bootstrapOrRunning() {
    if (bootstrap != null && !bootstrap.isBlank()) {
      return bootstrap;
    }
    return Llmlat.services(LlmlatHome.fromEnvironment()).kafkaBootstrap().orElse(null);
  }

  String required() {
    String b = bootstrapOrRunning();
    if (b == null) {
      throw new IllegalArgumentException(
          "no Kafka: run `llmlat services up`, or pass --kafka HOST:PORT (or LLMLAT_KAFKA)");
    }
    return b;
  }
}
