package dev.llmlat.ingest;

import dev.llmlat.ingest.spans.SpanRouter;
import org.apache.kafka.common.TopicPartition;

/**
 * A partition's batch closed for records, on its way into the store: its rows and the offsets
 * {@code first..end} they stand for ({@code replayed}: re-formed from an intent a crashed ingester
 * left).
 */
record SealedBatch(
    TopicPartition partition, SpanRouter rows, long first, long end, boolean replayed) {
  /** The insert's deduplication token: the topic's incarnation, the partition and the range. */
  String token(String topicId) {
    return "llmlat." + topicId + "." + partition.partition() + "." + first + "-" + end;
  }
}
