package dev.llmlat.otlpkafka;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * Kafka client settings a user supplies for every client llmlat creates (consumers, producers,
 * admin): security ({@code security.protocol}, {@code sasl.mechanism}, {@code sasl.jaas.config},
 * {@code ssl.truststore.location}, ...) and tuning, read from a Java properties file. The values
 * may be secrets: {@link #toString()} names the file and the keys, never a value.
 *
 * @param values the settings, applied over llmlat's defaults
 * @param source where they came from, for messages (null: none given)
 */
public record KafkaClientProperties(Map<String, String> values, Path source) {
  /**
   * Keys llmlat sets itself because correctness depends on them (offsets, transactions, serdes).
   */
  private static final Set<String> OWNED =
      Set.of(
          "bootstrap.servers",
          "group.id",
          "enable.auto.commit",
          "isolation.level",
          "transactional.id",
          "key.serializer",
          "value.serializer",
          "key.deserializer",
          "value.deserializer");

  public KafkaClientProperties {
    values = Map.copyOf(values);
    for (String key : values.keySet()) {
      requireNotOwned(key, source);
    }
  }

  /** Refuses a key llmlat sets itself, naming where it came from (null: given in code). */
  public static void requireNotOwned(String key, Path source) {
    if (OWNED.contains(key)) {
      throw new IllegalArgumentException(
          "Kafka client settings "
              + (source == null ? "" : source + " ")
              + "must not set "
              + key
              + ": llmlat sets it (bootstrap servers: --kafka / LLMLAT_KAFKA)");
    }
  }

  /** No extra settings: plaintext, llmlat's defaults. */
  public static KafkaClientProperties none() {
    return new KafkaClientProperties(Map.of(), null);
  }

  /** Reads a Java properties file; an unreadable or malformed file is named in the message. */
  public static KafkaClientProperties load(Path file) {
    if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
      throw new IllegalArgumentException(
          "Kafka client settings file " + file + " is not a readable file");
    }
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(in);
    } catch (IOException | IllegalArgumentException e) {
      // the message of a malformed escape never quotes the file's text
      throw new IllegalArgumentException(
          "Kafka client settings file "
              + file
              + " cannot be read as Java properties: "
              + e.getClass().getSimpleName());
    }
    Map<String, String> values = new TreeMap<>();
    p.stringPropertyNames().forEach(k -> values.put(k.strip(), p.getProperty(k).strip()));
    return new KafkaClientProperties(values, file);
  }

  /**
   * {@code config} with these settings put over it (llmlat's defaults stay where not overridden).
   */
  public Map<String, Object> applyTo(Map<String, Object> config) {
    config.putAll(values);
    return config;
  }

  /** An admin client for {@code bootstrapServers} with these settings. */
  public Admin admin(String bootstrapServers) {
    Map<String, Object> p = new java.util.HashMap<>();
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    applyTo(p);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    return Admin.create(p);
  }

  /** The security protocol in effect ({@code PLAINTEXT} unless the settings say otherwise). */
  public String securityProtocol() {
    return values.getOrDefault("security.protocol", "PLAINTEXT");
  }

  @Override
  public String toString() {
    if (values.isEmpty()) {
      return "default Kafka client settings";
    }
    // keys only: sasl.jaas.config, ssl.*.password and friends hold secrets
    return "Kafka client settings from "
        + source
        + " ("
        + securityProtocol()
        + "; keys "
        + new TreeMap<>(values).keySet()
        + ")";
  }
}
