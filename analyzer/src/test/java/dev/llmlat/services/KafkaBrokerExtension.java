package dev.llmlat.services;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Kafka broker (child JVM) for one test class: {@code @RegisterExtension static final
 * KafkaBrokerExtension broker = new KafkaBrokerExtension();}.
 */
public final class KafkaBrokerExtension implements BeforeAllCallback, AfterAllCallback {
  private Path dir;
  private KafkaBroker broker;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    dir = Files.createTempDirectory("llmlat-test-kafka");
    broker = KafkaBroker.start(KafkaBroker.Config.under(dir.resolve("kafka"), dir, dir, 0, 0));
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    try {
      broker.stop(Duration.ofSeconds(20));
    } finally {
      ChildJvm.deleteRecursively(dir);
    }
  }

  public String bootstrapServers() {
    return broker.bootstrapServers();
  }
}
