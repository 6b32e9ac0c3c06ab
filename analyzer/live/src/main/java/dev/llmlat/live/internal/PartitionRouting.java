package dev.llmlat.live.internal;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * Routes each span record ({@link SpanRouting}) and splits its routed spans by where their request
 * traces are assembled: those of the partition the record was read from go on in this task (its
 * assembler shares the task), the others through the internal topic. A producer that partitions by
 * trace id as the Java client does (llmlat's exporters, the publisher) puts a trace's own spans in
 * their assembler's partition, so only shared spans serving other partitions' requests cross.
 */
final class PartitionRouting implements Processor<byte[], byte[], String, RoutedSpans> {
  /** The pass-through children this forwards to by name ({@link LiveTopology}). */
  static final String HERE = "spans-for-this-partition";

  static final String ELSEWHERE = "spans-for-other-partitions";

  /**
   * The header naming the span topic's partition a record on the internal topic was read from: how
   * far each has been read is what the assemblers wait for ({@link TraceAssembler}).
   */
  static final String SOURCE_PARTITION = "llmlat.live.source-partition";

  private final int partitions;
  private final LiveMetrics metrics;
  private ProcessorContext<String, RoutedSpans> context;

  PartitionRouting(int partitions, LiveMetrics metrics) {
    this.partitions = partitions;
    this.metrics = metrics;
  }

  /**
   * The span topic's partition a record from the internal topic was read from; -1 if it does not
   * say.
   */
  static int sourcePartition(Headers headers) {
    Header h = headers.lastHeader(SOURCE_PARTITION);
    return h == null || h.value() == null || h.value().length != 4
        ? -1
        : ByteBuffer.wrap(h.value()).getInt();
  }

  @Override
  public void init(ProcessorContext<String, RoutedSpans> context) {
    this.context = context;
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    int here =
        context
            .recordMetadata()
            .map(RecordMetadata::partition)
            .orElseThrow(() -> new IllegalStateException("a span record without its partition"));
    Headers from =
        new RecordHeaders().add(SOURCE_PARTITION, ByteBuffer.allocate(4).putInt(here).array());
    for (KeyValue<String, RoutedSpans> kv : SpanRouting.route(record.value(), metrics)) {
      RoutedSpans routed = kv.value;
      List<String> local = new ArrayList<>(1);
      List<String> remote = new ArrayList<>(0);
      for (String target : routed.targets()) {
        (TracePartitioner.partitionOf(target, partitions) == here ? local : remote).add(target);
      }
      if (!local.isEmpty()) {
        RoutedSpans out =
            remote.isEmpty() ? routed : new RoutedSpans(local, routed.spans(), routed.shared());
        context.forward(record.withKey(kv.key).withValue(out), HERE);
      }
      if (!remote.isEmpty()) {
        RoutedSpans out =
            local.isEmpty() ? routed : new RoutedSpans(remote, routed.spans(), routed.shared());
        context.forward(record.withKey(kv.key).withValue(out).withHeaders(from), ELSEWHERE);
      }
    }
  }
}
