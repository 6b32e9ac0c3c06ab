package dev.llmlat.imports;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.services.KafkaBroker;
import org.junit.jupiter.api.Test;

/** An import while the broker is away fails with a message naming the cluster and the topic, not a client stack trace. */
class KafkaImportTargetTest {
  @Test
  void noBrokerIsNamedInTheFailure() throws Exception {
    String nobody = "127.0.0.1:" + KafkaBroker.freePort();
    assertThatThrownBy(() -> new KafkaImportTarget(nobody, "otlp_spans"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("Kafka at " + nobody + " (topic otlp_spans): could not start a transaction: ")
        .hasMessageContaining("15000ms");
  }
}
