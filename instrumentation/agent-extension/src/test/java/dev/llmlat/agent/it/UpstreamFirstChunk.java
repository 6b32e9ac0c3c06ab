package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.List;
import java.util.Map;

/**
 * The checks of the upstream first chunk (the engine's first content chunk received by the
 * gateway's HTTP client) on one streamed request's exported spans.
 */
final class UpstreamFirstChunk {
  static final String EVENT = "llmlat.upstream.first_chunk";
  static final String SPAN_ID = "llmlat.upstream.span_id";

  private UpstreamFirstChunk() {}

  /** Where the CLIENT span's own copy of the event is expected. */
  enum OnClientSpan {
    /**
     * The client's CLIENT span lasts the whole body (Reactor Netty, Netty's own): it has the event.
     */
    REQUIRED,
    /** The CLIENT span may end before the body starts (the JDK client ends it at the headers). */
    IF_STILL_OPEN
  }

  /**
   * Asserts the SERVER span's event: one, naming the CLIENT span whose id the engine received as
   * parent, timed after the engine's first write and not after the gateway's first chunk; and the
   * CLIENT span's copy at the same time where expected.
   *
   * @return the upstream first chunk, Unix ns
   */
  static long check(
      Span server,
      List<Span> spans,
      FakeEngine.Received upstream,
      long gatewayFirstChunk,
      OnClientSpan onClient) {
    List<Span.Event> events =
        server.getEventsList().stream().filter(e -> e.getName().equals(EVENT)).toList();
    assertThat(events).as("%s events on the SERVER span", EVENT).hasSize(1);
    Span.Event event = events.get(0);
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(event.getAttributesList());
    assertThat(attrs.get(SPAN_ID).getStringValue())
        .as("the CLIENT span whose traceparent the engine received")
        .isEqualTo(upstream.parentSpanId());
    long at = event.getTimeUnixNano();
    // same host clock
    assertThat(at)
        .as("after the engine wrote its first chunk")
        .isGreaterThanOrEqualTo(upstream.firstWriteEpochNanos());
    assertThat(at)
        .as("not after the gateway wrote its first chunk")
        .isLessThanOrEqualTo(gatewayFirstChunk);

    List<Span> client =
        spans.stream()
            .filter(s -> SpanTopic.hex(s.getSpanId()).equals(upstream.parentSpanId()))
            .toList();
    if (onClient == OnClientSpan.REQUIRED) {
      assertThat(client)
          .as("the CLIENT span %s among %s", upstream.parentSpanId(), spans)
          .hasSize(1);
    }
    for (Span c : client) {
      assertThat(c.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_CLIENT);
      List<Long> onClientSpan =
          c.getEventsList().stream()
              .filter(e -> e.getName().equals(EVENT))
              .map(Span.Event::getTimeUnixNano)
              .toList();
      // (absent when the span had ended: its end time is on the SDK's clock, anchored at the
      // trace's
      // start, which may be off Instant.now() by a fraction of a millisecond: no order to check)
      if (onClient == OnClientSpan.REQUIRED || !onClientSpan.isEmpty()) {
        assertThat(onClientSpan).as("the CLIENT span's copy").containsExactly(at);
      }
    }
    return at;
  }
}
