package dev.llmlat.imports;

import dev.llmlat.otlpkafka.KafkaClientProperties;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The record of the files published to a span topic: a compacted topic next to it ({@code
 * <topic>_imports}), one record per import keyed by its id, written in the import's own
 * transaction, so it exists exactly when the import's spans were committed. The store cannot be
 * asked (an import to Kafka may not reach it, and the ingester may not have caught up).
 */
final class KafkaImportLedger {
  private static final Duration READ_LIMIT = Duration.ofSeconds(30);

  private final String bootstrap;
  private final String topic;
  private final KafkaClientProperties kafkaClient;

  KafkaImportLedger(String bootstrap, String spansTopic, KafkaClientProperties kafkaClient) {
    this.bootstrap = bootstrap;
    this.topic = topic(spansTopic);
    this.kafkaClient = kafkaClient;
  }

  /** The ledger topic of a span topic. */
  static String topic(String spansTopic) {
    return spansTopic + "_imports";
  }

  String topic() {
    return topic;
  }

  /**
   * Creates the ledger topic unless it exists: compacted (the latest record per import is all that
   * counts), one partition.
   */
  void ensure() {
    try (Admin admin = kafkaClient.admin(bootstrap)) {
      if (admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic)) {
        return;
      }
      admin
          .createTopics(
              List.of(
                  new NewTopic(topic, Optional.of(1), Optional.empty())
                      .configs(Map.of("cleanup.policy", "compact"))))
          .all()
          .get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw failure("cannot create the import ledger topic", e.getCause());
      }
    } catch (TimeoutException e) {
      throw failure("no answer within 30 s while creating the import ledger topic", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw failure("interrupted while creating the import ledger topic", e);
    }
  }

  /**
   * The committed record of import {@code id}, if any: reads the whole (compacted, small) topic.
   */
  Optional<ImportRecord> find(String id) {
    Map<String, Object> p = new HashMap<>();
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "llmlat-import-ledger");
    kafkaClient.applyTo(p);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    // an import counts once its transaction committed, never while it may still abort
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    ImportRecord found = null;
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic, READ_LIMIT).stream()
              .map(i -> new TopicPartition(topic, i.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, READ_LIMIT);
      long deadline = System.nanoTime() + READ_LIMIT.toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp, READ_LIMIT) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw failure(
              "could not read the import ledger within " + READ_LIMIT.toSeconds() + " s", null);
        }
        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (id.equals(r.key()) && r.value() != null) {
            found = decode(r.value());
          }
        }
      }
    } catch (org.apache.kafka.common.KafkaException e) {
      throw failure("could not read the import ledger", e);
    }
    return Optional.ofNullable(found);
  }

  /** The ledger record of a committed import, to send in its transaction. */
  ProducerRecord<String, byte[]> record(ImportRecord r) {
    return new ProducerRecord<>(topic, r.file().id(), encode(r));
  }

  static byte[] encode(ImportRecord r) {
    Properties p = new Properties();
    p.setProperty("id", r.file().id());
    p.setProperty("file", r.file().file());
    p.setProperty("format", r.file().format());
    p.setProperty("options", r.file().options());
    p.setProperty("status", r.status().text());
    p.setProperty("spans", Long.toString(r.spans()));
    p.setProperty("at", r.at().toString());
    StringWriter out = new StringWriter();
    try {
      p.store(out, null);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  static ImportRecord decode(byte[] value) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(new String(value, StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ImportRecord(
        new ImportedFile(
            p.getProperty("id"),
            p.getProperty("file", ""),
            p.getProperty("format", ""),
            p.getProperty("options", "")),
        ImportRecord.Status.ofText(p.getProperty("status", "done")),
        Long.parseLong(p.getProperty("spans", "0")),
        0,
        Instant.parse(p.getProperty("at")));
  }

  private IllegalStateException failure(String what, Throwable cause) {
    return new IllegalStateException(
        "Kafka at "
            + bootstrap
            + " (topic "
            + topic
            + "): "
            + what
            + (cause == null ? "" : ": " + cause.getMessage()),
        cause);
  }
}
