package dev.llmlat.live.internal;

import dev.llmlat.analyze.Attribution;
import dev.llmlat.store.ClickHouseStore;
import java.util.List;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * The Streams topology: span records are decoded and routed ({@link SpanRouting}), repartitioned
 * by the request traces they serve through one internal topic ({@code <application id>-spans-by-request-repartition},
 * as many partitions as the span topic), and assembled and attributed there ({@link TraceAssembler}).
 * Everything goes through the internal topic, not only shared spans: producers partition by trace
 * id with partitioners of their own (the Collector's is not the Java client's), so only a partitioning
 * of our own puts a trace's spans and its steps in one task.
 */
public final class LiveTopology {
  public static final String BY_REQUEST = "spans-by-request";

  private LiveTopology() {}

  public static Topology build(String topic, TraceAssembler.Settings settings, ClickHouseStore store, LiveMetrics metrics) {
    return build(topic, settings, store, metrics, a -> {});
  }

  /** With {@code attributed} told of each request's first attribution ({@link TraceAssembler}). */
  public static Topology build(String topic, TraceAssembler.Settings settings, ClickHouseStore store, LiveMetrics metrics,
      Consumer<? super Attribution> attributed) {
    StreamsBuilder builder = new StreamsBuilder();
    for (String name : List.of(TraceAssembler.TRACES, TraceAssembler.SPANS, TraceAssembler.SHARED, TraceAssembler.TIMERS,
        TraceAssembler.CLOCK)) {
      var store0 = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(name), Serdes.Bytes(), Serdes.ByteArray());
      // the trace states change with every span: the cache folds those into one changelog write per commit
      builder.addStateStore(name.equals(TraceAssembler.TRACES) ? store0.withCachingEnabled() : store0);
    }
    builder.stream(topic, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()).withName("span-records"))
        .flatMap((key, value) -> SpanRouting.route(value, metrics), Named.as("route-spans"))
        .repartition(Repartitioned.with(Serdes.String(), RoutedSpans.SERDE).withName(BY_REQUEST)
            .withNumberOfPartitions(settings.partitions()).withStreamPartitioner(new TracePartitioner()))
        .process(() -> new TraceAssembler(settings, store, metrics, attributed), Named.as("assemble-and-attribute"),
            TraceAssembler.TRACES, TraceAssembler.SPANS, TraceAssembler.SHARED, TraceAssembler.TIMERS, TraceAssembler.CLOCK);
    return builder.build();
  }
}
