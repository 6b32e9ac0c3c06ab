package dev.llmlat.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Requests served through a gateway traced by the OpenTelemetry Java agent with llmlat's extension
 * (its span shapes: a SERVER span with the first-chunk event, its upstream CLIENT span ending at
 * the response headers) by an engine traced with llmlat's scheduler SDK ({@code llm_request} with
 * the first-token event, {@code queue}, {@code prefill}, {@code decode} with its token deltas),
 * both on one host's clock, written as OTLP/JSON for the import path. Every duration is the
 * scenario's: what attribution has to find.
 */
public final class ServedRequests {
  private static final ObjectMapper JSON = new ObjectMapper();
  static final long MS = 1_000_000L;

  private ServedRequests() {}

  /**
   * One request, in true time from the gateway's server span start {@code startNs}: the stretches
   * to the gateway's upstream call ({@code gatewayInNs}), to the engine's arrival ({@code
   * networkInNs}), waiting in the queue, the prefill, to the first token ({@code firstSampleNs}),
   * back to the gateway's first chunk ({@code returnNs}), then the decode gaps between output
   * tokens. Extra resource attributes go on the engine's and the gateway's resources (e.g. {@code
   * service.version}).
   */
  public record Request(
      String traceId,
      String model,
      long startNs,
      long gatewayInNs,
      long networkInNs,
      long queueNs,
      long prefillNs,
      long firstSampleNs,
      long returnNs,
      long[] gapsNs,
      Map<String, String> engineResource,
      Map<String, String> gatewayResource) {

    public Request {
      gapsNs = gapsNs.clone();
      engineResource = Map.copyOf(engineResource);
      gatewayResource = Map.copyOf(gatewayResource);
    }

    /** The engine's arrival: its request span starts. */
    public long arrivalNs() {
      return startNs + gatewayInNs + networkInNs;
    }

    /** TTFT as the gateway's caller sees it. */
    public long ttftNs() {
      return gatewayInNs + networkInNs + queueNs + prefillNs + firstSampleNs + returnNs;
    }

    public Request withModel(String model) {
      return new Request(
          traceId,
          model,
          startNs,
          gatewayInNs,
          networkInNs,
          queueNs,
          prefillNs,
          firstSampleNs,
          returnNs,
          gapsNs,
          engineResource,
          gatewayResource);
    }

    public Request withResources(Map<String, String> engine, Map<String, String> gateway) {
      return new Request(
          traceId,
          model,
          startNs,
          gatewayInNs,
          networkInNs,
          queueNs,
          prefillNs,
          firstSampleNs,
          returnNs,
          gapsNs,
          engine,
          gateway);
    }
  }

  /**
   * {@code n} requests every {@code spacingNs} from {@code startNs}, stretches drawn uniformly from
   * {@code seed}: gateway in 0.3-0.5 ms, network in 0.5-1 ms, queue 5-25 ms plus {@code
   * queueShiftNs}, prefill 20-40 ms, first sample 0.3-0.6 ms, the way back 0.5-1 ms; eight decode
   * gaps of 8-12 ms, one of them 40 ms in a request with probability {@code stallShare}. Trace ids
   * come from {@code seed} and {@code startNs} together: the same seed at another time gives the
   * same stretches (a larger stall share stalls the same requests and more) under other trace ids,
   * so two runs differ in what a test changes alone.
   */
  public static List<Request> generate(
      long seed,
      int n,
      long startNs,
      long spacingNs,
      long queueShiftNs,
      double stallShare,
      Map<String, String> engineResource) {
    Random random = new Random(seed);
    Random ids = new Random(seed * 31 + startNs);
    HexFormat hex = HexFormat.of();
    List<Request> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      byte[] id = new byte[16];
      ids.nextBytes(id);
      long[] gaps = new long[8];
      for (int g = 0; g < gaps.length; g++) {
        gaps[g] = uniform(random, 8 * MS, 12 * MS);
      }
      double stall = random.nextDouble();
      int stalled = 1 + random.nextInt(gaps.length - 1);
      if (stall < stallShare) {
        gaps[stalled] = 40 * MS;
      }
      out.add(
          new Request(
              hex.formatHex(id),
              "meta-llama/Llama-3.1-8B-Instruct",
              startNs + i * spacingNs,
              uniform(random, 300_000, 500_000),
              uniform(random, 500_000, MS),
              uniform(random, 5 * MS, 25 * MS) + queueShiftNs,
              uniform(random, 20 * MS, 40 * MS),
              uniform(random, 300_000, 600_000),
              uniform(random, 500_000, MS),
              gaps,
              engineResource,
              Map.of()));
    }
    return out;
  }

  private static long uniform(Random random, long from, long to) {
    return from + (long) (random.nextDouble() * (to - from));
  }

  /**
   * One OTLP/JSON {@code ExportTraceServiceRequest} per request, one a line: its gateway's and its
   * engine's spans.
   */
  public static List<String> otlpJson(List<Request> requests) {
    List<String> lines = new ArrayList<>();
    for (Request r : requests) {
      String server = "1" + r.traceId().substring(1, 16);
      String client = "2" + r.traceId().substring(17, 32);
      String engine = "3" + r.traceId().substring(1, 16);
      long arrival = r.arrivalNs();
      long scheduled = arrival + r.queueNs();
      long prefilled = scheduled + r.prefillNs();
      long firstToken = prefilled + r.firstSampleNs();
      long firstChunk = firstToken + r.returnNs();
      long finish = firstToken + Arrays.stream(r.gapsNs()).sum();
      ObjectNode doc = JSON.createObjectNode();
      ArrayNode resourceSpans = doc.putArray("resourceSpans");

      ArrayNode gatewayScopes =
          resource(resourceSpans, "llm-gateway", "gateway", r.gatewayResource());
      ObjectNode serverScope = gatewayScopes.addObject();
      serverScope
          .putObject("scope")
          .put("name", "io.opentelemetry.java-http-server")
          .put("version", "2.31.1-alpha");
      ObjectNode serverSpan =
          span(
              serverScope.putArray("spans").addObject(),
              r.traceId(),
              server,
              "",
              "POST /v1/chat/completions",
              2,
              r.startNs(),
              finish + MS);
      ArrayNode sa = serverSpan.putArray("attributes");
      str(sa, "http.request.method", "POST");
      str(sa, "url.path", "/v1/chat/completions");
      str(sa, "gen_ai.request.model", r.model());
      serverSpan
          .putArray("events")
          .addObject()
          .put("timeUnixNano", Long.toString(firstChunk))
          .put("name", LlmlatAttributes.EVENT_FIRST_CHUNK);
      ObjectNode clientScope = gatewayScopes.addObject();
      clientScope
          .putObject("scope")
          .put("name", "io.opentelemetry.java-http-client")
          .put("version", "2.31.1-alpha");
      long upstream = r.startNs() + r.gatewayInNs();
      ObjectNode clientSpan =
          span(
              clientScope.putArray("spans").addObject(),
              r.traceId(),
              client,
              server,
              "POST",
              3,
              upstream,
              arrival + 200_000); // streamed: the client span ends at the response headers
      ArrayNode ca = clientSpan.putArray("attributes");
      str(ca, "http.request.method", "POST");
      str(ca, "server.address", "10.0.0.10");
      str(ca, "url.full", "http://10.0.0.10:8000/v1/chat/completions");

      ObjectNode engineScope =
          resource(resourceSpans, "engine", "engine", r.engineResource()).addObject();
      engineScope.putObject("scope").put("name", "dev.llmlat.scheduler");
      ArrayNode spans = engineScope.putArray("spans");
      ObjectNode request =
          span(
              spans.addObject(),
              r.traceId(),
              engine,
              client,
              LlmlatSpanNames.REQUEST,
              2,
              arrival,
              finish);
      ArrayNode ra = request.putArray("attributes");
      str(ra, "gen_ai.request.model", r.model());
      str(ra, "gen_ai.request.id", "chatcmpl-" + r.traceId().substring(0, 12));
      request
          .putArray("events")
          .addObject()
          .put("timeUnixNano", Long.toString(firstToken))
          .put("name", LlmlatAttributes.EVENT_FIRST_TOKEN);
      span(
          spans.addObject(),
          r.traceId(),
          "4" + r.traceId().substring(1, 16),
          engine,
          "queue",
          1,
          arrival,
          scheduled);
      ObjectNode prefill =
          span(
              spans.addObject(),
              r.traceId(),
              "5" + r.traceId().substring(1, 16),
              engine,
              "prefill",
              1,
              scheduled,
              prefilled);
      ObjectNode tokens = prefill.putArray("attributes").addObject();
      tokens.put("key", LlmlatAttributes.PREFILL_TOKENS);
      tokens.putObject("value").put("intValue", "512");
      ObjectNode decode =
          span(
              spans.addObject(),
              r.traceId(),
              "6" + r.traceId().substring(1, 16),
              engine,
              "decode",
              1,
              firstToken,
              finish);
      ObjectNode deltas = decode.putArray("attributes").addObject();
      deltas.put("key", LlmlatAttributes.DECODE_TOKEN_DELTAS_NS);
      ArrayNode values = deltas.putObject("value").putObject("arrayValue").putArray("values");
      for (long g : r.gapsNs()) {
        values.addObject().put("intValue", Long.toString(g));
      }
      lines.add(doc.toString());
    }
    return lines;
  }

  /**
   * A resource on the one host ({@code node-1}, one clock) with its layer and extra attributes; its
   * scopes' array.
   */
  private static ArrayNode resource(
      ArrayNode resourceSpans, String service, String layer, Map<String, String> extra) {
    ObjectNode rs = resourceSpans.addObject();
    ArrayNode attributes = rs.putObject("resource").putArray("attributes");
    str(attributes, "service.name", service);
    str(attributes, LlmlatAttributes.HOST_NAME, "node-1");
    str(attributes, LlmlatAttributes.LAYER, layer);
    extra.forEach((k, v) -> str(attributes, k, v));
    return rs.putArray("scopeSpans");
  }

  private static ObjectNode span(
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
    return s;
  }

  private static void str(ArrayNode attributes, String key, String value) {
    ObjectNode a = attributes.addObject();
    a.put("key", key);
    a.putObject("value").put("stringValue", value);
  }
}
