package dev.llmlat.otlpkafka;

import dev.llmlat.semconv.LlmlatTopics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * Creates the topics of the contract ({@link LlmlatTopics}): the span topic and its dead letters.
 */
public final class SpanTopics {
  private SpanTopics() {}

  /**
   * Creates the span topic (with {@code partitions}) and its dead-letter topic unless they exist,
   * one replica each.
   */
  public static void ensure(Admin admin, String spansTopic, int partitions) {
    ensure(admin, spansTopic, partitions, (short) 1);
  }

  /**
   * The same, each partition of both topics on {@code replicationFactor} brokers (the cluster's
   * {@code min.insync.replicas} then says how many of them an {@code acks=all} write needs).
   */
  public static void ensure(
      Admin admin, String spansTopic, int partitions, short replicationFactor) {
    if (replicationFactor < 1) {
      throw new IllegalArgumentException(
          "the replication factor of "
              + spansTopic
              + " must be at least 1, got "
              + replicationFactor);
    }
    Set<String> existing;
    try {
      existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      List<NewTopic> missing = new ArrayList<>();
      for (String topic : List.of(spansTopic, LlmlatTopics.deadLetterTopic(spansTopic))) {
        if (!existing.contains(topic)) {
          missing.add(
              new NewTopic(topic, topic.equals(spansTopic) ? partitions : 1, replicationFactor)
                  .configs(Map.of("compression.type", "producer")));
        }
      }
      if (!missing.isEmpty()) {
        admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
      }
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException(
            "cannot create topics " + spansTopic + ": " + e.getCause().getMessage(), e.getCause());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topics", e);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "the Kafka cluster did not answer within 30 s while creating " + spansTopic, e);
    }
  }

  /**
   * The topic as the cluster describes it (its id, its partitions), or an exception saying why not.
   */
  public static TopicDescription describe(
      KafkaClientProperties kafkaClient, String bootstrapServers, String topic) {
    try (Admin admin = kafkaClient.admin(bootstrapServers)) {
      return admin
          .describeTopics(List.of(topic))
          .allTopicNames()
          .get(30, TimeUnit.SECONDS)
          .get(topic);
    } catch (ExecutionException e) {
      throw new IllegalStateException(
          "cannot read topic "
              + topic
              + " at "
              + bootstrapServers
              + ": "
              + e.getCause().getMessage(),
          e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "Kafka at " + bootstrapServers + " did not answer within 30 s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
