package dev.llmlat.attribution;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Builds {@link SpanRecord}s for analyzer tests, in milliseconds from a base time. */
final class Spans {
  static final long BASE = 1_795_946_400_000_000_000L;
  static final long MS = 1_000_000L;

  private Spans() {}

  /**
   * A gateway's SERVER span of a chat request (instance {@code gw-0} on {@code gw-host}), in epoch
   * ns, with the first content chunk it wrote.
   */
  static SpanRecord gatewayServer(
      String trace, String id, long startNs, long endNs, long firstChunkNs) {
    return new SpanRecord(
        trace,
        id,
        "",
        "POST /v1/chat/completions",
        "Server",
        "gateway",
        "gateway",
        "gw-host",
        "",
        "gw-0",
        startNs,
        endNs,
        Map.of(),
        List.of(new SpanRecord.Event(firstChunkNs, "gen_ai.first_chunk", Map.of())),
        List.of());
  }

  /**
   * The gateway's upstream call under {@code parent} to {@code address}, port 8000, in epoch ns.
   */
  static SpanRecord gatewayCall(
      String trace, String id, String parent, long startNs, long endNs, String address) {
    return new SpanRecord(
        trace,
        id,
        parent,
        "POST",
        "Client",
        "gateway",
        "gateway",
        "gw-host",
        "",
        "gw-0",
        startNs,
        endNs,
        Map.of("server.address", address, "server.port", "8000"),
        List.of(),
        List.of());
  }

  static final class B {
    String trace;
    String id;
    String parent = "";
    String name;
    String kind = "Internal";
    String service = "engine";
    String layer = "engine";
    String host = "engine-host";
    String scope = "";
    long start;
    long end;
    final Map<String, String> attrs = new HashMap<>();
    final List<SpanRecord.Event> events = new ArrayList<>();
    final List<SpanRecord.Link> links = new ArrayList<>();

    B(String trace, String id, String name, double startMs, double endMs) {
      this.trace = trace;
      this.id = id;
      this.name = name;
      this.start = BASE + Math.round(startMs * MS);
      this.end = BASE + Math.round(endMs * MS);
    }

    B parent(String p) {
      parent = p;
      return this;
    }

    B kind(String k) {
      kind = k;
      return this;
    }

    B gateway() {
      layer = "gateway";
      service = "gateway";
      host = "gw-host";
      return this;
    }

    /**
     * An engine that traces itself (vLLM, SGLang, ...): no llmlat layer, no host, its own scope.
     */
    B selfTraced(String scopeName) {
      layer = "";
      host = "";
      scope = scopeName;
      return this;
    }

    /**
     * A load generator's request (layer client) on the gateway's host unless {@code host} says
     * otherwise.
     */
    B client(String onHost) {
      layer = "client";
      service = "llmlat-load";
      host = onHost;
      kind = "Client";
      return this;
    }

    B gpu() {
      layer = "gpu";
      return this;
    }

    B attr(String k, Object v) {
      attrs.put(k, String.valueOf(v));
      return this;
    }

    B event(String name, double atMs) {
      events.add(new SpanRecord.Event(BASE + Math.round(atMs * MS), name, Map.of()));
      return this;
    }

    B event(String name, double atMs, Map<String, String> attributes) {
      events.add(new SpanRecord.Event(BASE + Math.round(atMs * MS), name, Map.copyOf(attributes)));
      return this;
    }

    B link(String traceId) {
      links.add(new SpanRecord.Link(traceId, "0000000000000000"));
      return this;
    }

    SpanRecord build() {
      return new SpanRecord(
          trace, id, parent, name, kind, service, layer, host, scope, "", start, end, attrs, events,
          links);
    }
  }

  static B span(String trace, String id, String name, double startMs, double endMs) {
    return new B(trace, id, name, startMs, endMs);
  }

  static String trace(int n) {
    return String.format("%032x", 0xabc0000L + n);
  }

  static String id(int n) {
    return String.format("%016x", 0x1000L + n);
  }
}
