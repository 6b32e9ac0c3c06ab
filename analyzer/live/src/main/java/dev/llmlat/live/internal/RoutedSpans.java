package dev.llmlat.live.internal;

import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.store.RowBinaryReader;
import dev.llmlat.store.RowBinaryWriter;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Spans on their way to the request traces that need them: a trace's own spans (one target, its
 * trace), or one shared span (an engine step, a GPU step, a batch) and every request trace it
 * served. Partitioned by the targets ({@link TracePartitioner}), so a shared span reaches each
 * partition holding one of its requests once, however many of them live there.
 */
public record RoutedSpans(List<String> targets, List<SpanRecord> spans, boolean shared) {

  /** The value serde of the internal topic. */
  public static final Serde<RoutedSpans> SERDE = Serdes.serdeFrom(serializer(), deserializer());

  private static Serializer<RoutedSpans> serializer() {
    return (topic, value) -> {
      RowBinaryWriter out = new RowBinaryWriter(512);
      out.varUInt(value.shared() ? 1 : 0);
      out.arrayLength(value.targets().size());
      value.targets().forEach(out::string);
      out.arrayLength(value.spans().size());
      value.spans().forEach(s -> SpanCodec.write(out, s));
      return out.toByteArray();
    };
  }

  private static Deserializer<RoutedSpans> deserializer() {
    return (topic, bytes) -> {
      RowBinaryReader in = new RowBinaryReader(bytes);
      boolean shared = in.varUInt() != 0;
      int n = in.arrayLength();
      List<String> targets = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        targets.add(in.string());
      }
      n = in.arrayLength();
      List<SpanRecord> spans = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        spans.add(SpanCodec.read(in));
      }
      return new RoutedSpans(targets, spans, shared);
    };
  }
}
