package dev.llmlat.analyze.enginetraces;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The gateway's spans as the OpenTelemetry Java agent 2.31.1 writes them with llmlat's extension
 * (shapes as in ../shared/traces/h200-e2e/gateway.otlp.jsonl): a SERVER span {@code POST
 * /v1/chat/completions} (scope io.opentelemetry.http-server... here the JDK server's) carrying the
 * extension's first-chunk event and request model, and its CLIENT child {@code POST} (scope
 * io.opentelemetry.java-http-client) that ends at the response headers, with {@code
 * server.address}/{@code server.port} of the replica it called.
 */
public final class AgentGatewayWriter {
  private static final ObjectMapper JSON = new ObjectMapper();

  private AgentGatewayWriter() {}

  public static List<String> write(List<EngineScenario.Request> requests) {
    List<String> lines = new ArrayList<>();
    for (EngineScenario.Request r : requests) {
      ObjectNode doc = JSON.createObjectNode();
      ObjectNode rs = doc.putArray("resourceSpans").addObject();
      ArrayNode res = rs.putObject("resource").putArray("attributes");
      str(res, "service.name", "llm-gateway");
      str(res, "host.name", "gw-host");
      str(res, "service.instance.id", "5f0c1d2e-8a9b-4c3d-9e8f-0a1b2c3d4e5f");
      str(res, "process.pid", "4242");
      str(res, "telemetry.sdk.language", "java");
      str(res, "llmlat.layer", "gateway");
      ArrayNode scopes = rs.putArray("scopeSpans");
      ObjectNode serverScope = scopes.addObject();
      serverScope
          .putObject("scope")
          .put("name", "io.opentelemetry.java-http-server")
          .put("version", "2.31.1-alpha");
      ObjectNode server = serverScope.putArray("spans").addObject();
      span(
          server,
          r.truth().traceId(),
          r.serverSpanId(),
          "",
          "POST /v1/chat/completions",
          2,
          r.gatewayStartNs(),
          r.gatewayEndNs());
      ArrayNode sa = server.putArray("attributes");
      str(sa, "http.request.method", "POST");
      str(sa, "url.path", "/v1/chat/completions");
      str(sa, "gen_ai.request.model", r.truth().model());
      str(sa, "gen_ai.system", "openai");
      ObjectNode ev = server.putArray("events").addObject();
      ev.put("timeUnixNano", Long.toString(r.firstChunkNs()));
      ev.put("name", "gen_ai.first_chunk");
      ObjectNode clientScope = scopes.addObject();
      clientScope
          .putObject("scope")
          .put("name", "io.opentelemetry.java-http-client")
          .put("version", "2.31.1-alpha");
      ObjectNode client = clientScope.putArray("spans").addObject();
      span(
          client,
          r.truth().traceId(),
          r.clientSpanId(),
          r.serverSpanId(),
          "POST",
          3,
          r.clientStartNs(),
          r.clientEndNs());
      ArrayNode ca = client.putArray("attributes");
      str(ca, "http.request.method", "POST");
      str(ca, "server.address", "10.0.0." + (10 + r.replica()));
      ObjectNode port = ca.addObject();
      port.put("key", "server.port");
      port.putObject("value").put("intValue", "8000");
      str(ca, "url.full", "http://10.0.0." + (10 + r.replica()) + ":8000/v1/chat/completions");
      lines.add(doc.toString());
    }
    return lines;
  }

  private static void span(
      ObjectNode s,
      String trace,
      String id,
      String parent,
      String name,
      int kind,
      long start,
      long end) {
    s.put("traceId", trace);
    s.put("spanId", id);
    if (!parent.isEmpty()) {
      s.put("parentSpanId", parent);
    }
    s.put("name", name);
    s.put("kind", kind);
    s.put("startTimeUnixNano", Long.toString(start));
    s.put("endTimeUnixNano", Long.toString(end));
  }

  private static void str(ArrayNode attrs, String key, String value) {
    ObjectNode a = attrs.addObject();
    a.put("key", key);
    a.putObject("value").put("stringValue", value);
  }
}
