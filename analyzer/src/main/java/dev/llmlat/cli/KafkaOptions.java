package dev.llmlat.cli;

import dev.llmlat.home.LlmlatHome;
import dev.llmlat.services.LocalServices;
import picocli.CommandLine.Option;

/** Where Kafka is: an existing cluster, or the broker `llmlat services up` runs. */
final class KafkaOptions {
  @Option(
      names = "--kafka",
      paramLabel = "HOST:PORT",
      defaultValue = "${env:LLMLAT_KAFKA}",
      description = "An existing Kafka cluster (bootstrap servers) instead of the broker `llmlat services up` runs. Env: LLMLAT_KAFKA.")
  String bootstrap;

  /** The bootstrap servers, or null when neither given nor running. */
  String bootstrapOrRunning() {
    if (bootstrap != null && !bootstrap.isBlank()) {
      return bootstrap;
    }
    return new LocalServices(LlmlatHome.fromEnvironment()).kafkaBootstrap().orElse(null);
  }

  String required() {
    String b = bootstrapOrRunning();
    if (b == null) {
      throw new IllegalArgumentException("no Kafka: run `llmlat services up`, or pass --kafka HOST:PORT (or LLMLAT_KAFKA)");
    }
    return b;
  }
}
