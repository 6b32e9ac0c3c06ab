package dev.llmlat.runtime.home;

import java.nio.file.Path;
import java.util.Map;

/**
 * Where one installation keeps its state: embedded data, broker data, logs, PID files. Everything
 * lives under one root ({@code $LLMLAT_HOME}, default {@code ~/.llmlat}) so two checkouts or test
 * runs with different homes never collide.
 */
public record LlmlatHome(Path root) {
  public static final String ENV = "LLMLAT_HOME";

  public LlmlatHome {
    root = root.toAbsolutePath().normalize();
  }

  /** System property that overrides {@value #ENV} (tests, and the children a service starts). */
  public static final String PROPERTY = "llmlat.home";

  public static LlmlatHome fromEnvironment() {
    String property = System.getProperty(PROPERTY);
    if (property != null && !property.isBlank()) {
      return new LlmlatHome(Path.of(property));
    }
    return from(System.getenv());
  }

  static LlmlatHome from(Map<String, String> env) {
    String configured = env.get(ENV);
    if (configured != null && !configured.isBlank()) {
      return new LlmlatHome(Path.of(configured));
    }
    return new LlmlatHome(Path.of(System.getProperty("user.home"), ".llmlat"));
  }

  /** The embedded ClickHouse data directory. */
  public Path clickhouseData() {
    return root.resolve("data").resolve("clickhouse");
  }

  /** The Kafka broker's log directory. */
  public Path kafkaData() {
    return root.resolve("data").resolve("kafka");
  }

  public Path logs() {
    return root.resolve("logs");
  }

  /** The store's password (mode 0600), made at its first start; clients of the store read it. */
  public Path storePassword() {
    return root.resolve("store.password");
  }

  /** PID files and the addresses of running services. */
  public Path run() {
    return root.resolve("run");
  }
}
