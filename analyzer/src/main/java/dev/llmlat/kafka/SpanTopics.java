package dev.llmlat.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * The topic contract (schemas/kafka/README.md): {@code otlp_spans} carries OTLP
 * {@code ExportTraceServiceRequest} protobuf values keyed by the 32-hex-digit trace id, exactly as
 * the Collector's kafka exporter writes them with {@code encoding: otlp_proto}; {@code
 * otlp_spans_dlq} keeps records the ingester could not decode, with the reason in headers.
 */
public final class SpanTopics {
  public static final String SPANS = "otlp_spans";
  public static final String DEAD_LETTERS = "otlp_spans_dlq";

  /** Dead-letter headers: why, and where the record came from. */
  public static final String HEADER_REASON = "llmlat.dlq.reason";
  public static final String HEADER_TOPIC = "llmlat.dlq.topic";
  public static final String HEADER_PARTITION = "llmlat.dlq.partition";
  public static final String HEADER_OFFSET = "llmlat.dlq.offset";

  private SpanTopics() {}

  /** Creates the span topic (with {@code partitions}) and its dead-letter topic unless they exist. */
  public static void ensure(Admin admin, String spansTopic, int partitions) {
    Set<String> existing;
    try {
      existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      List<NewTopic> missing = new ArrayList<>();
      for (String topic : List.of(spansTopic, deadLetterTopic(spansTopic))) {
        if (!existing.contains(topic)) {
          missing.add(new NewTopic(topic, topic.equals(spansTopic) ? partitions : 1, (short) 1)
              .configs(Map.of("compression.type", "producer")));
        }
      }
      if (!missing.isEmpty()) {
        admin.createTopics(missing).all().get(30, TimeUnit.SECONDS);
      }
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw new IllegalStateException("cannot create topics " + spansTopic + ": " + e.getCause().getMessage(), e.getCause());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while creating topics", e);
    } catch (TimeoutException e) {
      throw new IllegalStateException("the Kafka cluster did not answer within 30 s while creating " + spansTopic, e);
    }
  }

  /** The dead-letter topic of a span topic: its name plus {@code _dlq}. */
  public static String deadLetterTopic(String spansTopic) {
    return spansTopic + "_dlq";
  }
}
