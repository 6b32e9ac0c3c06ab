package dev.llmlat.agent.gateway.internal;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * One streamed response from the engine to the gateway's HTTP client, as the client stack's hooks
 * see its body arrive: records when its first content chunk (an SSE {@code data:} event other than
 * {@code [DONE]}, or the first bytes of a chunked body) was received, as the event {@value
 * LlmlatAttributes#EVENT_UPSTREAM_FIRST_CHUNK}
 *
 * <ul>
 *   <li>on the gateway's local root span (its SERVER span, which lasts the whole stream), with
 *       {@value GatewayAttributes#UPSTREAM_SPAN_ID} naming the CLIENT span of the call, and
 *   <li>on that CLIENT span itself while it is still open (Reactor Netty's, Netty's and Jetty's
 *       last the whole body; the JDK client's ends at the response headers, and an event after the
 *       end is dropped).
 * </ul>
 *
 * Client-stack neutral. The hooks call it from one thread at a time (a Netty event loop, a
 * reactive-streams subscriber), so it needs no locking; after the first chunk it costs one check.
 */
public final class UpstreamExchange {
  static final AttributeKey<String> SPAN_ID =
      AttributeKey.stringKey(GatewayAttributes.UPSTREAM_SPAN_ID);

  private final Span client;
  private final Span root;
  private final String clientSpanId;
  private final SseEventCounter events;
  private boolean recorded;

  private UpstreamExchange(Span client, Span root, String clientSpanId, boolean eventStream) {
    this.client = client;
    this.root = root;
    this.clientSpanId = clientSpanId;
    this.events = eventStream ? new SseEventCounter() : null;
  }

  /**
   * The exchange for a response just received, or null when nothing is to be recorded: a body of
   * known length (not streamed), or no span to record on.
   *
   * @param client the call's CLIENT span, or null when it cannot be reached
   * @param root the gateway's local root span (its SERVER span), or null
   * @param clientSpanId the CLIENT span's id when known without the span (e.g. from the {@code
   *     traceparent} the client sent), else null: taken from {@code client}
   */
  public static UpstreamExchange forResponse(
      Span client, Span root, String clientSpanId, String contentType, boolean lengthUnknown) {
    boolean eventStream =
        contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17);
    if (!eventStream && !lengthUnknown) {
      return null;
    }
    if (client != null && !client.getSpanContext().isValid()) {
      client = null;
    }
    if (root != null && !root.getSpanContext().isValid()) {
      root = null;
    }
    if (clientSpanId == null && client != null) {
      clientSpanId = client.getSpanContext().getSpanId();
    }
    if (root != null
        && clientSpanId != null
        && clientSpanId.equals(root.getSpanContext().getSpanId())) {
      // no CLIENT span (the client is not instrumented): the "client" is the root itself
      client = null;
      clientSpanId = null;
    }
    if (client == null && root == null) {
      return null;
    }
    return new UpstreamExchange(client, root, clientSpanId, eventStream);
  }

  /**
   * The parent id of a W3C {@code traceparent} ({@code 00-<trace id>-<parent id>-<flags>}): the
   * CLIENT span the engine is told about. Null when absent or malformed.
   */
  public static String parentId(String traceparent) {
    if (traceparent == null
        || traceparent.length() < 55
        || traceparent.charAt(35) != '-'
        || traceparent.charAt(52) != '-') {
      return null;
    }
    return traceparent.substring(36, 52);
  }

  /** True until the first chunk is recorded: the hooks may stop showing bytes after that. */
  public boolean waiting() {
    return !recorded;
  }

  /** A response message arrived (an RPC client's): the first is the first chunk. */
  public void onMessage() {
    if (!recorded) {
      record();
    }
  }

  public void onBytes(byte[] bytes, int offset, int length) {
    if (recorded || length <= 0) {
      return;
    }
    if (events == null || events.accept(bytes, offset, length) > 0) {
      record();
    }
  }

  public void onBytes(ByteBuffer buffer) {
    if (recorded || !buffer.hasRemaining()) {
      return;
    }
    if (events == null || events.accept(buffer) > 0) {
      record();
    }
  }

  private void record() {
    recorded = true;
    long now = epochNanos();
    if (client != null && client.isRecording()) {
      client.addEvent(
          LlmlatAttributes.EVENT_UPSTREAM_FIRST_CHUNK,
          Attributes.empty(),
          now,
          TimeUnit.NANOSECONDS);
    }
    if (root != null) {
      Attributes attributes =
          clientSpanId == null ? Attributes.empty() : Attributes.of(SPAN_ID, clientSpanId);
      root.addEvent(
          LlmlatAttributes.EVENT_UPSTREAM_FIRST_CHUNK, attributes, now, TimeUnit.NANOSECONDS);
    }
  }

  private static long epochNanos() {
    Instant now = Instant.now();
    return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
  }
}
