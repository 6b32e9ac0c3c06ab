package dev.llmlat.live.internal;

import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.store.RowBinaryReader;
import dev.llmlat.store.RowBinaryWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@link SpanRecord}s as bytes for state stores and the internal topic: the store's own {@code
 * RowBinary} primitives (LEB128 lengths, UTF-8), names read back interned as the store reader does,
 * so a span survives a changelog round trip equal to itself.
 */
public final class SpanCodec {
  private SpanCodec() {}

  public static void write(RowBinaryWriter out, SpanRecord s) {
    out.string(s.traceId())
        .string(s.spanId())
        .string(s.parentSpanId())
        .string(s.name())
        .string(s.kind())
        .string(s.service())
        .string(s.layer())
        .string(s.host())
        .string(s.scope())
        .string(s.instance())
        .int64(s.startNs())
        .int64(s.endNs())
        .stringMap(s.attributes());
    out.arrayLength(s.events().size());
    for (SpanRecord.Event e : s.events()) {
      out.int64(e.timeNs()).string(e.name()).stringMap(e.attributes());
    }
    out.arrayLength(s.links().size());
    for (SpanRecord.Link l : s.links()) {
      out.string(l.traceId()).string(l.spanId());
    }
  }

  public static SpanRecord read(RowBinaryReader in) {
    String traceId = in.string();
    String spanId = in.string();
    String parent = in.string();
    String name = in.repeatedString();
    String kind = in.repeatedString();
    String service = in.repeatedString();
    String layer = in.repeatedString();
    String host = in.repeatedString();
    String scope = in.repeatedString();
    String instance = in.repeatedString();
    long start = in.int64();
    long end = in.int64();
    Map<String, String> attributes = in.stringMap();
    int n = in.arrayLength();
    List<SpanRecord.Event> events = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      events.add(new SpanRecord.Event(in.int64(), in.repeatedString(), in.stringMap()));
    }
    n = in.arrayLength();
    List<SpanRecord.Link> links = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      links.add(new SpanRecord.Link(in.string(), in.string()));
    }
    return new SpanRecord(
        traceId,
        spanId,
        parent,
        name,
        kind,
        service,
        layer,
        host,
        scope,
        instance,
        start,
        end,
        attributes,
        events,
        links);
  }

  public static byte[] encode(SpanRecord span) {
    RowBinaryWriter out = new RowBinaryWriter(256);
    write(out, span);
    return out.toByteArray();
  }

  public static SpanRecord decode(byte[] bytes) {
    return read(new RowBinaryReader(bytes));
  }

  /** The same span without events and links: what clock evidence needs of it. */
  static SpanRecord bare(SpanRecord s) {
    return s.events().isEmpty() && s.links().isEmpty()
        ? s
        : new SpanRecord(
            s.traceId(),
            s.spanId(),
            s.parentSpanId(),
            s.name(),
            s.kind(),
            s.service(),
            s.layer(),
            s.host(),
            s.scope(),
            s.instance(),
            s.startNs(),
            s.endNs(),
            s.attributes(),
            List.of(),
            List.of());
  }
}
