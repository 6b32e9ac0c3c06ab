package dev.llmlat.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.semconv.LlmlatTopics;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.stream.StreamSupport;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

class DeadLettersTest {
  private final MockProducer<byte[], byte[]> producer =
      new MockProducer<>(false, null, new ByteArraySerializer(), new ByteArraySerializer());
  private final IngestMetrics metrics = new IngestMetrics();
  private final DeadLetters deadLetters = new DeadLetters(producer, "otlp_spans.dlq", metrics);

  static ConsumerRecord<byte[], byte[]> record(int partition, long offset, byte[] value) {
    RecordHeaders headers = new RecordHeaders();
    headers.add("traceparent", bytes("00-abc-def-01"));
    return new ConsumerRecord<>(
        "otlp_spans",
        partition,
        offset,
        0L,
        TimestampType.CREATE_TIME,
        3,
        value.length,
        bytes("key"),
        value,
        headers,
        Optional.empty());
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static List<String> headers(ProducerRecord<byte[], byte[]> r) {
    return StreamSupport.stream(r.headers().spliterator(), false)
        .map((Header h) -> h.key() + "=" + new String(h.value(), StandardCharsets.UTF_8))
        .toList();
  }

  @Test
  void sendsTheRecordUnchangedWithItsHeadersThenTheReasonAndWhereItCameFrom() {
    byte[] garbage = {0, (byte) 0xff, 42};
    deadLetters.send(record(3, 1234, garbage), "not an OTLP ExportTraceServiceRequest protobuf");
    deadLetters.flush();

    assertThat(producer.history()).hasSize(1);
    ProducerRecord<byte[], byte[]> sent = producer.history().getFirst();
    assertThat(sent.topic()).isEqualTo("otlp_spans.dlq");
    assertThat(sent.partition()).isNull(); // the dead-letter topic's own partitioner decides
    assertThat(sent.key()).isEqualTo(bytes("key"));
    assertThat(sent.value()).isEqualTo(garbage);
    assertThat(headers(sent))
        .containsExactly(
            "traceparent=00-abc-def-01",
            LlmlatTopics.HEADER_REASON + "=not an OTLP ExportTraceServiceRequest protobuf",
            LlmlatTopics.HEADER_TOPIC + "=otlp_spans",
            LlmlatTopics.HEADER_PARTITION + "=3",
            LlmlatTopics.HEADER_OFFSET + "=1234");
    assertThat(metrics.snapshot().deadLettered()).isEqualTo(1);
  }

  @Test
  void aFailedSendFailsTheNextFlushOnceNamingTheTopic() {
    deadLetters.send(record(0, 7, bytes("x")), "no spans in the record");
    deadLetters.send(record(0, 8, bytes("y")), "no spans in the record");
    producer.errorNext(new TimeoutException("broker away"));
    producer.completeNext();

    assertThatThrownBy(deadLetters::flush)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("otlp_spans.dlq")
        .hasMessageContaining("broker away");
    deadLetters.flush(); // reported once: a later batch's dead letters went through
    assertThat(metrics.snapshot().deadLettered()).isEqualTo(2);
  }

  @Test
  void closeClosesTheProducer() {
    deadLetters.close();
    assertThat(producer.closed()).isTrue();
  }
}
