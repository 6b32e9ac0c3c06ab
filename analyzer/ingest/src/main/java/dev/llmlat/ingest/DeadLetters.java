package dev.llmlat.ingest;

import dev.llmlat.semconv.LlmlatTopics;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter topic: a record the ingester cannot decode goes there unchanged (key, value, its
 * own headers) with the reason and where it came from in the {@link LlmlatTopics} headers. Sends
 * are asynchronous; {@link #flush()} makes them durable before the batch they belong to is
 * committed, so a record is never committed past without being either stored or dead-lettered.
 */
final class DeadLetters implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);

  private final Producer<byte[], byte[]> producer;
  private final String topic;
  private final IngestMetrics metrics;
  private final AtomicReference<Exception> failure = new AtomicReference<>();

  /** Sends to {@code topic} through {@code producer}, which it closes. */
  DeadLetters(Producer<byte[], byte[]> producer, String topic, IngestMetrics metrics) {
    this.producer = producer;
    this.topic = topic;
    this.metrics = metrics;
  }

  String topic() {
    return topic;
  }

  void send(ConsumerRecord<byte[], byte[]> record, String reason) {
    metrics.deadLettered.incrementAndGet();
    LOG.warn(
        "dead-lettering {}-{}@{}: {}", record.topic(), record.partition(), record.offset(), reason);
    producer.send(
        new ProducerRecord<>(topic, null, record.key(), record.value(), headers(record, reason)),
        (meta, e) -> {
          if (e != null) {
            failure.compareAndSet(null, e);
          }
        });
  }

  /** The record's own headers, then the reason and its topic, partition and offset. */
  static Headers headers(ConsumerRecord<byte[], byte[]> record, String reason) {
    RecordHeaders headers = new RecordHeaders();
    record.headers().forEach(headers::add);
    headers.add(LlmlatTopics.HEADER_REASON, utf8(reason));
    headers.add(LlmlatTopics.HEADER_TOPIC, utf8(record.topic()));
    headers.add(LlmlatTopics.HEADER_PARTITION, utf8(Integer.toString(record.partition())));
    headers.add(LlmlatTopics.HEADER_OFFSET, utf8(Long.toString(record.offset())));
    return headers;
  }

  /**
   * Waits until everything sent is acknowledged.
   *
   * @throws IllegalStateException a send failed since the last flush: the batch must not be
   *     committed
   */
  void flush() {
    producer.flush();
    Exception e = failure.getAndSet(null);
    if (e != null) {
      throw new IllegalStateException(
          "could not write to the dead-letter topic " + topic + ": " + e, e);
    }
  }

  @Override
  public void close() {
    try {
      producer.close(Duration.ofSeconds(10));
    } catch (RuntimeException e) {
      LOG.warn("closing the dead-letter producer: {}", e.toString());
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
