package dev.llmlat.live.internal;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * Sends routed spans to the partitions of the request traces they serve (one record reaching
 * several partitions when a shared span's requests live in several). The partition of a trace is
 * the Kafka client's default for its key, written out here because the assembler must compute the
 * same to pick its own targets out of a multi-target record.
 */
public final class TracePartitioner implements StreamPartitioner<String, RoutedSpans> {

  /** The partition that holds {@code traceId}'s assembly among {@code partitions}. */
  public static int partitionOf(String traceId, int partitions) {
    return Utils.toPositive(Utils.murmur2(traceId.getBytes(StandardCharsets.UTF_8))) % partitions;
  }

  @Override
  @SuppressWarnings(
      "removal") // still the interface's one abstract method; Streams calls the one with headers
  public Optional<Set<Integer>> partitions(
      String topic, String key, RoutedSpans value, int numPartitions) {
    return partitions(topic, key, value, null, numPartitions);
  }

  @Override
  public Optional<Set<Integer>> partitions(
      String topic, String key, RoutedSpans value, Headers headers, int numPartitions) {
    Set<Integer> out = new HashSet<>();
    for (String t : value.targets()) {
      out.add(partitionOf(t, numPartitions));
    }
    return Optional.of(out);
  }
}
