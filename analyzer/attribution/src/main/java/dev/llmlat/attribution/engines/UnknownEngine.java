package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.semconv.LlmlatAttributes;

/**
 * A trace whose engine layer no adapter knows: what can still be known. The engine is the SERVER
 * span another service opened under the gateway's upstream CLIENT span (its total time is known,
 * not its parts); without one, the upstream call itself stands for it.
 */
public final class UnknownEngine {
  public static final String NAME = "unknown engine";
  static final String CANNOT_SHOW =
      "anything inside the engine: queue, prefill and first token are not broken down";

  private UnknownEngine() {}

  /**
   * The span that stands for the trace's engine request, or null when the trace has no gateway
   * request.
   */
  public static SpanRecord standIn(TraceContext trace) {
    SpanRecord upstream = null;
    for (SpanRecord s : trace.trace()) {
      if (!"Client".equals(s.kind())) {
        continue;
      }
      SpanRecord server = gatewayServerAbove(s, trace);
      if (server == null) {
        continue;
      }
      for (SpanRecord child : trace.children(s)) {
        if ("Server".equals(child.kind()) && !child.service().equals(s.service())) {
          return child;
        }
      }
      if (upstream == null || s.durationNs() > upstream.durationNs()) {
        upstream = s;
      }
    }
    return upstream;
  }

  private static SpanRecord gatewayServerAbove(SpanRecord client, TraceContext trace) {
    SpanRecord up = client;
    for (int depth = 0; up != null && depth < 64; depth++) {
      if (isGatewayServer(up)) {
        return up;
      }
      up = up.parentSpanId().isEmpty() ? null : trace.find(up.parentSpanId());
    }
    return null;
  }

  /**
   * A gateway's SERVER span: its resource says {@code llmlat.layer=gateway} (our extension), or,
   * under the stock agent without it, an agent instrumentation scope wrote it.
   */
  public static boolean isGatewayServer(SpanRecord s) {
    return "Server".equals(s.kind())
        && (LlmlatAttributes.LAYER_GATEWAY.equals(s.layer())
            || (s.layer().isEmpty() && s.scope().startsWith(AGENT_SCOPE)));
  }

  /** The condition {@link #isGatewayServer} over {@code otel_traces}. */
  public static final String GATEWAY_SERVER_WHERE =
      "SpanKind = 'Server' AND (ResourceAttributes['llmlat.layer'] = 'gateway'"
          + " OR (ResourceAttributes['llmlat.layer'] = '' AND startsWith(ScopeName, 'io.opentelemetry.')))";

  private static final String AGENT_SCOPE = "io.opentelemetry.";

  public static EngineRequest read(SpanRecord standIn, TraceContext trace) {
    boolean engineSpan = "Server".equals(standIn.kind());
    EngineRequest.Builder b =
        EngineRequest.builder(NAME, standIn)
            .model(Attrs.first(standIn, "gen_ai.response.model", "gen_ai.request.model"));
    if (engineSpan) {
      b.note(
          "engine '"
              + standIn.service()
              + "' (span '"
              + standIn.name()
              + "') follows no known convention: its "
              + String.format("%.1f ms", standIn.durationNs() / 1e6)
              + " are not broken down (queue, prefill, first token unknown)");
    } else {
      b.note(
          "no engine spans under the gateway's upstream call '"
              + standIn.name()
              + "': the engine's part is not broken down");
      b.arrival(standIn.startNs()).end(standIn.endNs());
    }
    return b.build();
  }
}
