package dev.llmlat.testing;

import dev.llmlat.services.ChildJvm;
import dev.llmlat.services.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real Kafka broker (child JVM) for one test class: {@code @RegisterExtension static final
 * KafkaBrokerExtension broker = new KafkaBrokerExtension();}.
 */
public final class KafkaBrokerExtension implements BeforeAllCallback, AfterAllCallback {
  private final Map<String, String> saslPlainUsers;
  private Path dir;
  private KafkaBroker broker;

  public KafkaBrokerExtension() {
    this(Map.of());
  }

  /** A broker that also serves SASL_PLAINTEXT with PLAIN for these users (user -> password). */
  public KafkaBrokerExtension(Map<String, String> saslPlainUsers) {
    this.saslPlainUsers = saslPlainUsers;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    dir = Files.createTempDirectory("llmlat-test-kafka");
    broker =
        KafkaBroker.start(
            KafkaBroker.Config.under(dir.resolve("kafka"), dir, dir, 0, 0)
                .withSaslPlainUsers(saslPlainUsers));
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

  public String saslBootstrapServers() {
    return broker.saslBootstrapServers();
  }

  /** The broker's own log file. */
  public Path logFile() {
    return dir.resolve("kafka.log");
  }
}
