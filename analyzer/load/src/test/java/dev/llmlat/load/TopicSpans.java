package dev.llmlat.load;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** Every span on a topic as a consumer reads it back: the record's key, the span, its resource. */
final class TopicSpans {
  record Read(String key, Span span, Resource resource) {
    String traceId() {
      return HexFormat.of().formatHex(span.getTraceId().toByteArray());
    }

    String spanId() {
      return HexFormat.of().formatHex(span.getSpanId().toByteArray());
    }

    String parentSpanId() {
      return HexFormat.of().formatHex(span.getParentSpanId().toByteArray());
    }

    String resourceAttr(String key) {
      return attr(resource.getAttributesList(), key);
    }

    String attr(String key) {
      return attr(span.getAttributesList(), key);
    }

    static String attr(List<KeyValue> attributes, String key) {
      for (KeyValue kv : attributes) {
        if (kv.getKey().equals(key)) {
          return kv.getValue().hasStringValue()
              ? kv.getValue().getStringValue()
              : Long.toString(kv.getValue().getIntValue());
        }
      }
      return null;
    }

    List<Long> longs(String key) {
      for (KeyValue kv : span.getAttributesList()) {
        if (kv.getKey().equals(key)) {
          return kv.getValue().getArrayValue().getValuesList().stream()
              .map(v -> v.getIntValue())
              .toList();
        }
      }
      return null;
    }

    long event(String name) {
      return span.getEventsList().stream()
          .filter(e -> e.getName().equals(name))
          .mapToLong(Span.Event::getTimeUnixNano)
          .findFirst()
          .orElse(-1);
    }
  }

  private TopicSpans() {}

  /**
   * Reads {@code topic} from the start until {@code done} holds for what was read (60 s at most).
   */
  static List<Read> readUntil(String bootstrap, String topic, Predicate<List<Read>> done)
      throws Exception {
    List<Read> out = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed"),
            new StringDeserializer(),
            new ByteArrayDeserializer())) {
      List<TopicPartition> partitions =
          consumer.partitionsFor(topic).stream()
              .map(p -> new TopicPartition(topic, p.partition()))
              .toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (!done.test(out)) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError(
              "spans on " + topic + " did not arrive within 60 s; read " + out.size());
        }
        for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
          for (ResourceSpans rs :
              ExportTraceServiceRequest.parseFrom(record.value()).getResourceSpansList()) {
            for (ScopeSpans ss : rs.getScopeSpansList()) {
              for (Span s : ss.getSpansList()) {
                out.add(new Read(record.key(), s, rs.getResource()));
              }
            }
          }
        }
      }
    }
    return out;
  }
}
