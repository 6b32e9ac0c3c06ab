package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.ReactorNettyGatewayMain;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A gateway's backpressure on an HTTP/2 stream against the truth: the Reactor Netty gateway under
 * the agent serves h2c ({@code HttpProtocol.H2C}, prior knowledge) and relays a fast stream of
 * large SSE events (3.2 MB) to a Netty HTTP/2 client ({@link H2cStreamClient}) whose stream window
 * is 16 KB ({@code SETTINGS_INITIAL_WINDOW_SIZE}; the connection's stays 65,535): the client reads
 * the response's first event, then returns no bytes to the gateway's windows (no {@code
 * WINDOW_UPDATE}) for a pause it times itself, then goes on. The gateway's stream window is spent
 * within a round trip; the stream's channel turns unwritable once its pending bytes pass its
 * high-water mark (64 KB), and writable again once the client's grants have drained them below the
 * low-water mark. That block, the SERVER span's longest {@code llmlat.gateway.backpressure} event,
 * lasts the pause within 15 % (it began before the pause did, the gateway being held by the small
 * window from the start, and ends a few round trips of 16 KB grants after it), spans the moment the
 * client resumed, and says the stream's window was full: {@code http2_stream_window}; at most 16 KB
 * was ever unacknowledged, so neither the socket nor the connection's window (64 KB) filled. The
 * same stream read by a client whose windows hold it all (4 MB), consuming each frame at once,
 * holds the gateway up never: a count of 0 and no event. Both are SERVER spans the agent makes over
 * HTTP/2 only with the extension (the agent traces Netty's HTTP/1.x codecs only).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Http2BackpressureIT {
  private static final int EVENTS = 200;
  private static final int CONTENT_BYTES = 16 * 1024;

  /**
   * One event: far below the connection's window (65,535) and any socket buffer, so only the
   * stream's window can fill; and large enough that the client's grants after the pause drain the
   * gateway's pending bytes in a few round trips (1 KB grants took 400 to 700 ms on a loaded
   * two-core machine, up to a fourth of the pause).
   */
  private static final int SMALL_STREAM_WINDOW = 16 * 1024;

  /** More than the whole response: flow control never holds it. */
  private static final int LARGE_STREAM_WINDOW = 4 * 1024 * 1024;

  private static final long READ_BEFORE_PAUSE = CONTENT_BYTES;
  private static final long PAUSE_MILLIS = 2500;

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess gateway;

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    assertThat((long) EVENTS * CONTENT_BYTES)
        .as("the stream outlasts the stream channel's high-water mark many times over")
        .isGreaterThan(16 * 64 * 1024L);
    engine = FakeEngine.withLargeEvents(EVENTS, CONTENT_BYTES);
    gateway =
        GatewayProcess.start(
            GatewayProcess.java17OrCurrent(),
            ReactorNettyGatewayMain.class,
            GatewayProcess.extensionWithKafka(
                broker.bootstrapServers(),
                "-Dotel.instrumentation.netty.enabled=true",
                "-Dotel.instrumentation.reactor.enabled=true",
                "-Dotel.instrumentation.reactor-netty.enabled=true"),
            List.of(engine.baseUrl(), "h2c"));
    for (int i = 0; i < 3; i++) { // warm-up: the relay path's first runs are interpreted
      read(BackpressureIT.hex(16), LARGE_STREAM_WINDOW, 0);
    }
  }

  @AfterAll
  void stop() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  void aClientThatGrantsNoWindowHoldsTheStreamUpForItsPause() throws Exception {
    String traceId = BackpressureIT.hex(16);
    H2cStreamClient.Read read = read(traceId, SMALL_STREAM_WINDOW, PAUSE_MILLIS);
    Span server = serverSpan(traceId);
    List<Span.Event> events = BackpressureIT.backpressure(server);
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    System.out.printf(
        "%s h2c: client paused %.1f ms; gateway backpressure events (start after the pause began,"
            + " ms: duration, cause): %s; count %s%n",
        gateway.name(),
        read.pauseNanos() / 1e6,
        events.stream()
            .map(
                e ->
                    String.format(
                        "%.1f: %.1f %s",
                        (e.getTimeUnixNano() - read.pausedEpochNanos()) / 1e6,
                        BackpressureIT.duration(e) / 1e6,
                        BackpressureIT.cause(e)))
            .toList(),
        attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT));
    assertThat(read.status()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
    assertThat(read.completeStream()).as("the client read the whole stream").isTrue();
    assertThat(read.pauseNanos()).as("the client paused").isPositive();
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(EVENTS);
    assertThat(events).as("backpressure events on the SERVER span").isNotEmpty();
    long count = attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT).getIntValue();
    long total = attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS).getIntValue();
    assertThat(count).isGreaterThanOrEqualTo(events.size());

    Span.Event longest =
        BackpressureIT.checkLongestIsThePause(
            events, total, read.pauseNanos(), read.resumedEpochNanos());
    assertThat(BackpressureIT.cause(longest))
        .as("what was full")
        .isEqualTo(LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE_HTTP2_STREAM_WINDOW);
  }

  @Test
  void aClientWhoseWindowsHoldTheStreamHoldsItUpNever() throws Exception {
    String traceId = BackpressureIT.hex(16);
    H2cStreamClient.Read read = read(traceId, LARGE_STREAM_WINDOW, 0);
    List<Span> spans = serverAndClientSpans(broker, gateway, traceId);
    Span server = spans.stream().filter(BackpressureIT::isServer).findFirst().orElseThrow();
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    System.out.printf(
        "%s h2c: SERVER span %s, network.protocol.version %s, attributes %s%n",
        gateway.name(), server.getName(), attrs.get("network.protocol.version"), attrs.keySet());

    // the stream's SERVER span is the agent's, with the extension's attributes, and was current
    // while the gateway called the engine: the upstream CLIENT span is in the caller's trace
    assertThat(server.getName()).startsWith("POST");
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("gen_ai.request.stream").getBoolValue()).isTrue();
    assertThat(attrs).containsKey("llmlat.gateway.first_chunk_unix_nano");
    assertThat(spans)
        .as("the gateway's upstream CLIENT span, in the caller's trace")
        .anyMatch(s -> s.getKind() == Span.SpanKind.SPAN_KIND_CLIENT);

    assertThat(read.status()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
    assertThat(read.completeStream()).as("the client read the whole stream").isTrue();
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(EVENTS);
    assertThat(attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT))
        .as("backpressure observed")
        .isNotNull()
        .extracting(AnyValue::getIntValue)
        .isEqualTo(0L);
    assertThat(attrs).doesNotContainKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS);
    assertThat(BackpressureIT.backpressure(server)).isEmpty();
  }

  /** One streamed chat over h2c in trace {@code traceId}, pausing after the first event. */
  private H2cStreamClient.Read read(String traceId, int streamWindow, long pauseMillis)
      throws Exception {
    return H2cStreamClient.post(
        URI.create(gateway.baseUrl()),
        "/v1/chat/completions",
        GatewayClient.chatBody(true, EVENTS).getBytes(StandardCharsets.UTF_8),
        "00-" + traceId + "-" + BackpressureIT.hex(8) + "-01",
        streamWindow,
        READ_BEFORE_PAUSE,
        pauseMillis);
  }

  /** The trace's spans once its SERVER (one) and CLIENT spans are exported. */
  static List<Span> serverAndClientSpans(
      TestBroker broker, GatewayProcess gateway, String traceId) {
    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records =
          topic.trace(
              traceId,
              spans ->
                  spans.stream().anyMatch(BackpressureIT::isServer)
                      && spans.stream()
                          .anyMatch(s -> s.getKind() == Span.SpanKind.SPAN_KIND_CLIENT),
              Duration.ofSeconds(30));
    }
    List<Span> spans = records.stream().flatMap(r -> r.spans().stream()).toList();
    assertThat(spans.stream().filter(BackpressureIT::isServer))
        .as("SERVER spans of trace %s; gateway log:\n%s", traceId, gateway.log())
        .hasSize(1);
    return spans;
  }

  private Span serverSpan(String traceId) {
    return BackpressureIT.serverSpan(broker, gateway, traceId);
  }
}
