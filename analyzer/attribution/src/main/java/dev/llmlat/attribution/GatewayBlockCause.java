package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;

/**
 * What was full while the gateway could not write to its client, as its backpressure events say
 * ({@value LlmlatAttributes#GATEWAY_BACKPRESSURE_CAUSE}), and how attribution words it: every text
 * starts with {@link #PREFIX}, so a reader (and {@code report}) can group them.
 */
public enum GatewayBlockCause {
  /** The stack does not say (servlet containers, Jetty, gRPC): the client read slowly. */
  UNKNOWN(null, "the client read slowly", "slow reader"),
  SOCKET(
      LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_SOCKET,
      "its socket to the client was full: the client read slowly",
      "socket full"),
  HTTP2_STREAM_WINDOW(
      LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_HTTP2_STREAM_WINDOW,
      "the request's HTTP/2 stream window was full: the client read slowly",
      "HTTP/2 stream window full"),
  HTTP2_CONNECTION_WINDOW(
      LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_HTTP2_CONNECTION_WINDOW,
      "the HTTP/2 connection's window was full: the client read its streams slowly",
      "HTTP/2 connection window full");

  public static final String PREFIX = "the gateway could not write to its client";

  private final String value;
  private final String text;
  private final String kind;

  GatewayBlockCause(String value, String why, String kind) {
    this.value = value;
    this.text = PREFIX + " (" + why + ")";
    this.kind = PREFIX + " (" + kind + ")";
  }

  /** The cause an event's attribute value names; {@link #UNKNOWN} for none or another value. */
  public static GatewayBlockCause of(String value) {
    if (value != null) {
      for (GatewayBlockCause c : values()) {
        if (value.equals(c.value)) {
          return c;
        }
      }
    }
    return UNKNOWN;
  }

  /** How attribution names a block of this cause (a stall cause adds its milliseconds). */
  public String text() {
    return text;
  }

  /** The short kind {@code report} groups stall causes of this cause under. */
  public String kind() {
    return kind;
  }
}
