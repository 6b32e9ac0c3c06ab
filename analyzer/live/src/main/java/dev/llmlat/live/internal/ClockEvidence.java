package dev.llmlat.live.internal;

import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.store.RowBinaryReader;
import dev.llmlat.store.RowBinaryWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Clock evidence across traces. The skew estimator needs client/server exchanges of many requests
 * between two clock domains, and one trace holds one or two; {@code analyze} reads thousands at a
 * time. Here every attributed trace leaves its exchanges in a state store, the most recent {@link
 * #perPair} per (client domain, server domain), and the exchanges between the domains of the traces
 * being attributed join them (as spans: the client span, its server child, and the client's
 * ancestors on its own clock, which bound a streamed exchange and root the alignment).
 */
final class ClockEvidence {
  private final KeyValueStore<Bytes, byte[]> store;
  private final int perPair;

  /**
   * One exchange: its domains, its time (the client's start) and its spans (without events and
   * links).
   */
  record Exchange(String pair, String id, long timeNs, List<SpanRecord> spans) {}

  ClockEvidence(KeyValueStore<Bytes, byte[]> store, int perPair) {
    this.store = store;
    this.perPair = perPair;
  }

  /**
   * Every exchange across clock domains among {@code spans} (a CLIENT span and a child on another
   * domain), with the client's CLIENT/SERVER ancestors on its own domain: what the estimator reads.
   */
  static List<Exchange> exchanges(Collection<SpanRecord> spans) {
    Map<String, SpanRecord> callers = new HashMap<>();
    for (SpanRecord s : spans) {
      if ("Client".equals(s.kind()) || "Server".equals(s.kind())) {
        callers.put(s.traceId() + s.spanId(), s);
      }
    }
    List<Exchange> out = new ArrayList<>();
    for (SpanRecord server : spans) {
      SpanRecord client =
          server.parentSpanId().isEmpty()
              ? null
              : callers.get(server.traceId() + server.parentSpanId());
      if (client == null
          || !"Client".equals(client.kind())
          || client.clockDomain().equals(server.clockDomain())) {
        continue;
      }
      List<SpanRecord> exchange =
          new ArrayList<>(List.of(SpanCodec.bare(client), SpanCodec.bare(server)));
      SpanRecord up = client;
      for (int depth = 0; depth < 32 && !up.parentSpanId().isEmpty(); depth++) {
        up = callers.get(up.traceId() + up.parentSpanId());
        if (up == null || !up.clockDomain().equals(client.clockDomain())) {
          break;
        }
        exchange.add(SpanCodec.bare(up));
      }
      out.add(
          new Exchange(
              client.clockDomain() + '\u0000' + server.clockDomain(),
              server.traceId() + server.spanId(),
              client.startNs(),
              exchange));
    }
    return out;
  }

  /**
   * The kept exchanges' spans for these domain pairs, less those of {@code exceptTraces} (present
   * themselves).
   */
  List<SpanRecord> spansFor(Set<String> pairs, Set<String> exceptTraces) {
    Map<String, SpanRecord> out = new LinkedHashMap<>();
    for (String pair : pairs) {
      for (Exchange e : read(pair)) {
        for (SpanRecord s : e.spans()) {
          if (!exceptTraces.contains(s.traceId())) {
            out.putIfAbsent(s.traceId() + s.spanId(), s);
          }
        }
      }
    }
    return new ArrayList<>(out.values());
  }

  /**
   * Keeps {@code exchanges}, each pair's most recent {@link #perPair} (a trace attributed again
   * replaces its own).
   */
  void record(List<Exchange> exchanges) {
    Map<String, List<Exchange>> byPair = new LinkedHashMap<>();
    exchanges.forEach(e -> byPair.computeIfAbsent(e.pair(), k -> new ArrayList<>()).add(e));
    for (Map.Entry<String, List<Exchange>> p : byPair.entrySet()) {
      Map<String, Exchange> kept = new LinkedHashMap<>();
      read(p.getKey()).forEach(e -> kept.put(e.id(), e));
      p.getValue().forEach(e -> kept.put(e.id(), e));
      List<Exchange> recent = new ArrayList<>(kept.values());
      recent.sort(java.util.Comparator.comparingLong(Exchange::timeNs));
      write(p.getKey(), recent.subList(Math.max(0, recent.size() - perPair), recent.size()));
    }
  }

  private List<Exchange> read(String pair) {
    byte[] bytes = store.get(key(pair));
    if (bytes == null) {
      return List.of();
    }
    RowBinaryReader in = new RowBinaryReader(bytes);
    int n = in.arrayLength();
    List<Exchange> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String id = in.string();
      long time = in.int64();
      int spans = in.arrayLength();
      List<SpanRecord> list = new ArrayList<>(spans);
      for (int k = 0; k < spans; k++) {
        list.add(SpanCodec.read(in));
      }
      out.add(new Exchange(pair, id, time, list));
    }
    return out;
  }

  private void write(String pair, List<Exchange> exchanges) {
    RowBinaryWriter out = new RowBinaryWriter(1024);
    out.arrayLength(exchanges.size());
    for (Exchange e : exchanges) {
      out.string(e.id()).int64(e.timeNs()).arrayLength(e.spans().size());
      e.spans().forEach(s -> SpanCodec.write(out, s));
    }
    store.put(key(pair), out.toByteArray());
  }

  private static Bytes key(String pair) {
    return Bytes.wrap(pair.getBytes(StandardCharsets.UTF_8));
  }
}
