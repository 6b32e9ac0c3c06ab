package dev.llmlat.live.internal;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.store.ClickHouseStore;
import java.util.List;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * The Streams topology: span records are decoded and routed ({@link SpanRouting}, {@link
 * PartitionRouting}) to the partitions assembling the request traces they serve, and assembled and
 * attributed there ({@link TraceAssembler}). Spans for the partition they were read from stay in
 * the task; the others cross one internal topic ({@code <application
 * id>-spans-by-request-repartition}, as many partitions as the span topic) to the task of their
 * partition. Reading the span topic and the internal topic in one task keeps a trace's own spans
 * off the internal topic whenever their producer partitioned by trace id as the Java client does; a
 * producer with a partitioner of its own (the Collector's is not the Java client's) only makes more
 * of them cross.
 */
public final class LiveTopology {
  public static final String BY_REQUEST = "spans-by-request";

  /**
   * How the internal topic's name ends ({@code <application id>-} before it): Streams names
   * repartition topics so.
   */
  public static final String INTERNAL_TOPIC_SUFFIX = "-" + BY_REQUEST + "-repartition";

  private LiveTopology() {}

  public static Topology build(
      String topic, TraceAssembler.Settings settings, ClickHouseStore store, LiveMetrics metrics) {
    return build(topic, settings, store, metrics, a -> {});
  }

  /** With {@code attributed} told of each request's first attribution ({@link TraceAssembler}). */
  public static Topology build(
      String topic,
      TraceAssembler.Settings settings,
      ClickHouseStore store,
      LiveMetrics metrics,
      Consumer<? super Attribution> attributed) {
    StreamsBuilder builder = new StreamsBuilder();
    for (String name :
        List.of(
            TraceAssembler.TRACES,
            TraceAssembler.SPANS,
            TraceAssembler.SHARED,
            TraceAssembler.TIMERS,
            TraceAssembler.CLOCK)) {
      var store0 =
          Stores.keyValueStoreBuilder(
              Stores.persistentKeyValueStore(name), Serdes.Bytes(), Serdes.ByteArray());
      // the trace states change with every span: the cache folds those into one changelog write per
      // commit
      builder.addStateStore(
          name.equals(TraceAssembler.TRACES) ? store0.withCachingEnabled() : store0);
    }
    KStream<String, RoutedSpans> routed =
        builder.stream(
                topic,
                Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("span-records"))
            .process(
                () -> new PartitionRouting(settings.partitions(), metrics),
                Named.as("route-spans"));
    // pass-throughs the router forwards to by name
    KStream<String, RoutedSpans> here =
        routed.filter((k, v) -> true, Named.as(PartitionRouting.HERE));
    KStream<String, RoutedSpans> fromElsewhere =
        routed
            .filter((k, v) -> true, Named.as(PartitionRouting.ELSEWHERE))
            .repartition(
                Repartitioned.with(Serdes.String(), RoutedSpans.SERDE)
                    .withName(BY_REQUEST)
                    .withNumberOfPartitions(settings.partitions())
                    .withStreamPartitioner(new TracePartitioner()));
    here.merge(fromElsewhere, Named.as("spans-of-this-partition"))
        .process(
            () -> new TraceAssembler(settings, store, metrics, attributed),
            Named.as("assemble-and-attribute"),
            TraceAssembler.TRACES,
            TraceAssembler.SPANS,
            TraceAssembler.SHARED,
            TraceAssembler.TIMERS,
            TraceAssembler.CLOCK);
    return builder.build();
  }
}
