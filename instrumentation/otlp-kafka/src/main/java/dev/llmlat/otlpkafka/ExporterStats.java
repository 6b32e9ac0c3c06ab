package dev.llmlat.otlpkafka;

/**
 * A snapshot of a {@link KafkaSpanExporter}'s counters. Spans are either sent (acknowledged by the
 * broker), dropped, or still in flight; nothing is dropped without being counted here.
 *
 * @param spansSent spans in records the broker acknowledged
 * @param recordsSent records (one per trace per export batch) the broker acknowledged
 * @param spansDroppedQueueFull spans refused at {@code export()} because the queue was full
 * @param spansDroppedSendFailed spans whose record could not be sent (broker unreachable past
 *     {@code max.block.ms} or the delivery timeout, record too large, producer unavailable)
 * @param queued traces waiting in the exporter's queue
 * @param queueCapacity the queue's bound
 */
public record ExporterStats(
    long spansSent,
    long recordsSent,
    long spansDroppedQueueFull,
    long spansDroppedSendFailed,
    int queued,
    int queueCapacity) {

  public long spansDropped() {
    return spansDroppedQueueFull + spansDroppedSendFailed;
  }
}
