package dev.llmlat.agent.gateway.internal;

import dev.llmlat.semconv.LlmlatAttributes;

/**
 * Attribute names this extension writes beyond the shared contract ({@code
 * dev.llmlat.semconv.LlmlatAttributes} in the schemas module, where they belong once the analyzer
 * reads them).
 */
public final class GatewayAttributes {
  private GatewayAttributes() {}

  /**
   * On an OpenAI-style gateway SERVER span that no llmlat hook observed: {@value
   * #FIRST_CHUNK_UNSUPPORTED} (no first-chunk time, chunk count nor {@code gen_ai.*} request
   * attributes can be expected on it).
   */
  public static final String FIRST_CHUNK = "llmlat.gateway.first_chunk";

  public static final String FIRST_CHUNK_UNSUPPORTED = "unsupported";

  /**
   * With {@link #FIRST_CHUNK}: the server stack, as the agent's instrumentation scope names it
   * (e.g. {@code io.opentelemetry.undertow-1.4}).
   */
  public static final String SERVER = LlmlatAttributes.GATEWAY_SERVER;

  /**
   * On the {@code llmlat.upstream.first_chunk} event that the gateway's local root span (its SERVER
   * span) gets for each streamed upstream call: the id (16 hex) of that call's CLIENT span, as in
   * the {@code traceparent} the engine received. Absent when that span is unknown: the client made
   * none (not instrumented), or, on Netty, the request carried no W3C {@code traceparent}.
   */
  public static final String UPSTREAM_SPAN_ID = LlmlatAttributes.UPSTREAM_SPAN_ID;
}
