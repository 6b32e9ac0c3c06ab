package dev.llmlat.agent.it;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
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

/** Reads {@code otlp_spans} from the start and decodes each record with the OTLP proto classes. */
public final class SpanTopic implements AutoCloseable {
  /** One record: its key and the decoded request. */
  public record Record(String key, byte[] value, ExportTraceServiceRequest request) {
    public List<Span> spans() {
      List<Span> spans = new ArrayList<>();
      for (ResourceSpans rs : request.getResourceSpansList()) {
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          spans.addAll(ss.getSpansList());
        }
      }
      return spans;
    }
  }

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final List<Record> records = new ArrayList<>();

  public SpanTopic(String bootstrapServers) {
    consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers,
                ConsumerConfig.GROUP_ID_CONFIG,
                "llmlat-agent-extension-test",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    TopicPartition partition = new TopicPartition(TestBroker.TOPIC, 0);
    consumer.assign(List.of(partition));
    consumer.seekToBeginning(List.of(partition));
  }

  public static String hex(com.google.protobuf.ByteString id) {
    return HexFormat.of().formatHex(id.toByteArray());
  }

  /** Polls until some record satisfies the predicate or the timeout passes; returns all so far. */
  public List<Record> pollUntil(Predicate<List<Record>> done, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.test(records) && System.nanoTime() < deadline) {
      for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
        try {
          records.add(
              new Record(
                  r.key() == null ? null : new String(r.key(), StandardCharsets.US_ASCII),
                  r.value(),
                  ExportTraceServiceRequest.parseFrom(r.value())));
        } catch (InvalidProtocolBufferException e) {
          throw new AssertionError(
              "record at offset " + r.offset() + " is not an ExportTraceServiceRequest", e);
        }
      }
    }
    return records;
  }

  /** The records of one trace once it has at least {@code spans} spans (within the timeout). */
  public List<Record> trace(String traceId, int spans, Duration timeout) {
    pollUntil(
        all -> forTrace(all, traceId).stream().mapToInt(r -> r.spans().size()).sum() >= spans,
        timeout);
    return forTrace(records, traceId);
  }

  /** The records of one trace once its spans satisfy {@code complete} (within the timeout). */
  public List<Record> trace(String traceId, Predicate<List<Span>> complete, Duration timeout) {
    pollUntil(
        all ->
            complete.test(
                forTrace(all, traceId).stream().flatMap(r -> r.spans().stream()).toList()),
        timeout);
    return forTrace(records, traceId);
  }

  private static List<Record> forTrace(List<Record> all, String traceId) {
    return all.stream()
        .filter(r -> r.spans().stream().anyMatch(s -> hex(s.getTraceId()).equals(traceId)))
        .toList();
  }

  @Override
  public void close() {
    consumer.close(Duration.ofSeconds(2));
  }
}
