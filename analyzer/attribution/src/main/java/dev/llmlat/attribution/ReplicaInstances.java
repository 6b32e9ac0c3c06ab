package dev.llmlat.attribution;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Tells apart replicas of an engine whose resource names no host, instance, pod or process (vLLM,
 * TensorRT-LLM, SGLang, TGI by default): each replica is the address the gateway called it at
 * ({@code server.address}:{@code server.port} on the upstream CLIENT span). Without this, every
 * replica of a service would share one clock and one engine instance.
 */
final class ReplicaInstances {
  private ReplicaInstances() {}

  static List<SpanRecord> assign(List<SpanRecord> spans) {
    if (spans.stream().noneMatch(ReplicaInstances::unplaced)) {
      return spans; // every span names its host or instance: nothing to tell apart
    }
    Map<SpanKey, SpanRecord> clients = new HashMap<>();
    for (SpanRecord s : spans) {
      if ("Client".equals(s.kind())) {
        clients.put(SpanKey.of(s), s);
      }
    }
    if (clients.isEmpty()) {
      return spans;
    }
    // (trace, service) -> the address its engine spans were called at
    Map<String, String> called = new HashMap<>();
    for (SpanRecord s : spans) {
      if (!unplaced(s) || s.parentSpanId().isEmpty()) {
        continue;
      }
      SpanRecord client = clients.get(SpanKey.parentOf(s));
      if (client == null || client.service().equals(s.service())) {
        continue;
      }
      String address = address(client);
      if (!address.isEmpty()) {
        called.put(s.traceId() + '\u0000' + s.service(), s.service() + "@" + address);
      }
    }
    if (called.isEmpty()) {
      return spans;
    }
    List<SpanRecord> out = new ArrayList<>(spans.size());
    for (SpanRecord s : spans) {
      String instance =
          s.host().isEmpty() && s.instance().isEmpty()
              ? called.get(s.traceId() + '\u0000' + s.service())
              : null;
      // batch spans in traces of their own (TGI) belong to the replica of the requests they link to
      for (int i = 0;
          instance == null && i < s.links().size() && s.host().isEmpty() && s.instance().isEmpty();
          i++) {
        instance = called.get(s.links().get(i).traceId() + '\u0000' + s.service());
      }
      out.add(instance == null ? s : s.withInstance(instance));
    }
    return out;
  }

  /** A span whose resource names neither its host nor its process instance. */
  private static boolean unplaced(SpanRecord s) {
    return s.host().isEmpty() && s.instance().isEmpty();
  }

  /** {@code host:port} the client called (stable semantic conventions, else the older names). */
  private static String address(SpanRecord client) {
    String host = client.attr("server.address");
    if (host.isEmpty()) {
      host = client.attr("net.peer.name");
    }
    if (host.isEmpty()) {
      return "";
    }
    String port = client.attr("server.port");
    if (port.isEmpty()) {
      port = client.attr("net.peer.port");
    }
    return port.isEmpty() ? host : host + ":" + port;
  }
}
