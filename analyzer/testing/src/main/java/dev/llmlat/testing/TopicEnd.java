package dev.llmlat.testing;

import com.google.protobuf.ByteString;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A marker span written to every partition of a span topic after what a test published there. An
 * ingester reads each partition in order and commits an offset only once the store has the rows
 * before it, so once its group has committed every partition past its marker, everything before the
 * markers is stored (or deliberately dropped): a test then checks that nothing more (a second copy)
 * was stored without waiting a while for it. The markers are spans named {@link #SPAN_NAME}, one
 * trace each, which the ingester stores too.
 */
public final class TopicEnd {
  public static final String SPAN_NAME = "llmlat-test-topic-end";
  private final String bootstrap;
  private final String topic;

  /** Partition -> the marker's offset. */
  private final Map<TopicPartition, Long> markers;

  private TopicEnd(String bootstrap, String topic, Map<TopicPartition, Long> markers) {
    this.bootstrap = bootstrap;
    this.topic = topic;
    this.markers = Map.copyOf(markers);
  }

  /**
   * Writes one marker to each partition of {@code topic} (keyed by its trace id, as the contract
   * says) and waits for the broker's acks.
   */
  public static TopicEnd mark(String bootstrap, String topic)
      throws InterruptedException, ExecutionException, TimeoutException {
    int partitions;
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      partitions =
          admin
              .describeTopics(List.of(topic))
              .allTopicNames()
              .get(60, TimeUnit.SECONDS)
              .get(topic)
              .partitions()
              .size();
    }
    Map<TopicPartition, Long> markers = new HashMap<>();
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrap,
                ProducerConfig.ACKS_CONFIG,
                "all"),
            new StringSerializer(),
            new ByteArraySerializer())) {
      for (int p = 0; p < partitions; p++) {
        String traceId = UUID.randomUUID().toString().replace("-", "");
        RecordMetadata sent =
            producer
                .send(new ProducerRecord<>(topic, p, traceId, marker(traceId)))
                .get(60, TimeUnit.SECONDS);
        markers.put(new TopicPartition(topic, p), sent.offset());
      }
    }
    return new TopicEnd(bootstrap, topic, markers);
  }

  private static byte[] marker(String traceId) {
    long now = System.currentTimeMillis() * 1_000_000L; // recent, so that no retention drops it
    Span span =
        Span.newBuilder()
            .setTraceId(ByteString.copyFrom(HexFormat.of().parseHex(traceId)))
            .setSpanId(ByteString.copyFrom(HexFormat.of().parseHex(traceId.substring(0, 16))))
            .setName(SPAN_NAME)
            .setKind(Span.SpanKind.SPAN_KIND_INTERNAL)
            .setStartTimeUnixNano(now)
            .setEndTimeUnixNano(now + 1_000)
            .build();
    Resource resource =
        Resource.newBuilder()
            .addAttributes(
                KeyValue.newBuilder()
                    .setKey("service.name")
                    .setValue(AnyValue.newBuilder().setStringValue("llmlat-test")))
            .build();
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .setResource(resource)
                .addScopeSpans(ScopeSpans.newBuilder().addSpans(span)))
        .build()
        .toByteArray();
  }

  /** Whether consumer group {@code groupId} has committed every partition past its marker. */
  public boolean handledBy(String groupId) {
    Map<TopicPartition, OffsetAndMetadata> committed;
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
      committed =
          admin
              .listConsumerGroupOffsets(groupId)
              .partitionsToOffsetAndMetadata()
              .get(60, TimeUnit.SECONDS);
    } catch (InterruptedException | ExecutionException | TimeoutException e) {
      throw new IllegalStateException(
          "cannot read the offsets group " + groupId + " committed on " + topic, e);
    }
    return markers.entrySet().stream()
        .allMatch(
            m -> {
              OffsetAndMetadata c = committed.get(m.getKey());
              return c != null && c.offset() > m.getValue();
            });
  }

  /**
   * Waits until consumer group {@code groupId} (an ingester's) has handled and committed every
   * record up to the markers.
   */
  public void awaitHandledBy(String groupId) throws InterruptedException {
    Await.until(
        () -> handledBy(groupId),
        "group "
            + groupId
            + " to commit the "
            + markers.size()
            + " partitions of "
            + topic
            + " past their end markers",
        120);
  }
}
