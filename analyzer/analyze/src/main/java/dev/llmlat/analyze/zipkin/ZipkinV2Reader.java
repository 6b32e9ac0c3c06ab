package dev.llmlat.analyze.zipkin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.attribution.SpanRecord;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads Zipkin v2 JSON (an array of spans, microsecond timestamps) as {@link SpanRecord}s. A {@code
 * shared} SERVER span (Zipkin's RPC half that reuses its client's span id) gets an id of its own
 * whose parent is the client span, so the pair reads like an OpenTelemetry client/server pair; the
 * clock domain is the endpoint's address (else its service name).
 */
public final class ZipkinV2Reader {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ZipkinV2Reader() {}

  public static List<SpanRecord> read(Path file) throws IOException {
    JsonNode root = JSON.readTree(file.toFile());
    if (root == null || !root.isArray()) {
      throw new IOException(file + ": not Zipkin v2 JSON (expected an array of spans)");
    }
    List<SpanRecord> spans = new ArrayList<>();
    for (JsonNode s : root) {
      String traceId = pad(s.path("traceId").asText(), 32);
      String id = pad(s.path("id").asText(), 16);
      String parent = s.hasNonNull("parentId") ? pad(s.get("parentId").asText(), 16) : "";
      String kind = s.path("kind").asText("");
      boolean shared = s.path("shared").asBoolean(false);
      if (shared && "SERVER".equals(kind)) {
        parent = id;
        id = serverId(id);
      }
      long start = s.path("timestamp").asLong() * 1000;
      long end = start + s.path("duration").asLong() * 1000;
      JsonNode endpoint = s.path("localEndpoint");
      String service = endpoint.path("serviceName").asText("");
      String host = endpoint.path("ipv4").asText(endpoint.path("ipv6").asText(service));
      Map<String, String> tags = new HashMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = s.path("tags").fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        tags.put(e.getKey(), e.getValue().asText());
      }
      List<SpanRecord.Event> events = new ArrayList<>();
      for (JsonNode a : s.path("annotations")) {
        events.add(
            new SpanRecord.Event(
                a.path("timestamp").asLong() * 1000, a.path("value").asText(), Map.of()));
      }
      spans.add(
          new SpanRecord(
              traceId,
              id,
              parent,
              s.path("name").asText(""),
              otelKind(kind),
              service,
              "",
              host,
              start,
              end,
              tags,
              events,
              List.of()));
    }
    // children of a shared server span hang off the server half, not the client half
    Map<String, String> serverOf = new HashMap<>();
    for (SpanRecord s : spans) {
      if ("Server".equals(s.kind())
          && !s.parentSpanId().isEmpty()
          && s.spanId().equals(serverId(s.parentSpanId()))) {
        serverOf.put(s.traceId() + s.parentSpanId(), s.spanId());
      }
    }
    List<SpanRecord> out = new ArrayList<>(spans.size());
    for (SpanRecord s : spans) {
      String server = serverOf.get(s.traceId() + s.parentSpanId());
      boolean childOfSharedRpc =
          server != null
              && !s.spanId().equals(server)
              && !"Client".equals(s.kind())
              && s.clockDomain().equals(hostOf(spans, s.traceId(), server));
      out.add(
          childOfSharedRpc
              ? new SpanRecord(
                  s.traceId(),
                  s.spanId(),
                  server,
                  s.name(),
                  s.kind(),
                  s.service(),
                  s.layer(),
                  s.host(),
                  s.startNs(),
                  s.endNs(),
                  s.attributes(),
                  s.events(),
                  s.links())
              : s);
    }
    return out;
  }

  private static String hostOf(List<SpanRecord> spans, String traceId, String spanId) {
    for (SpanRecord s : spans) {
      if (s.traceId().equals(traceId) && s.spanId().equals(spanId)) {
        return s.clockDomain();
      }
    }
    return "";
  }

  private static String serverId(String clientId) {
    // flip the lowest bit's neighbour deterministically: a distinct, stable id for the server half
    long v = Long.parseUnsignedLong(clientId, 16) ^ 0x5a5a5a5a00000000L;
    return String.format("%016x", v);
  }

  private static String pad(String hex, int width) {
    String h = hex.toLowerCase(Locale.ROOT);
    return h.length() >= width ? h : "0".repeat(width - h.length()) + h;
  }

  private static String otelKind(String zipkinKind) {
    return switch (zipkinKind) {
      case "SERVER" -> "Server";
      case "CLIENT" -> "Client";
      case "PRODUCER" -> "Producer";
      case "CONSUMER" -> "Consumer";
      default -> "Internal";
    };
  }
}
