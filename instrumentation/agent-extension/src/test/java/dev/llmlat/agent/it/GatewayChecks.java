package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Requests through a gateway under the agent and the extension, and the checks of their exported
 * spans: a streamed chat's SERVER span carries the first chunk written to the caller (within 5 ms
 * of the engine's first write), the upstream first chunk received from the engine (between the
 * two), the chunk count and the {@code gen_ai.*} request attributes, and no prompt text; a plain
 * completion carries the attributes and no first-chunk data.
 */
final class GatewayChecks {
  static final long FIRST_CHUNK_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final TestBroker broker;
  private final FakeEngine engine;
  private final int chunks;
  private final GatewayClient client = new GatewayClient();

  GatewayChecks(TestBroker broker, FakeEngine engine, int chunks) {
    this.broker = broker;
    this.engine = engine;
    this.chunks = chunks;
  }

  /**
   * One request's result, what the engine received, the trace's SERVER span and all its spans, the
   * raw records.
   */
  record Exchanged(
      GatewayClient.Result result,
      FakeEngine.Received upstream,
      Span server,
      List<Span> spans,
      String raw) {}

  /**
   * Warm-up requests, then streamed requests until one's first chunk is within the slack (at most
   * 5: this machine's two cores are shared by the engine, the broker and several gateways).
   */
  void checkStreamedChat(GatewayProcess gateway, UpstreamFirstChunk.OnClientSpan onClient)
      throws Exception {
    for (int i = 0; i < 3; i++) { // warm-up: the relay path's first runs are interpreted
      assertThat(
              client
                  .post(gateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 8))
                  .status())
          .as("gateway log:\n%s", gateway.log())
          .isEqualTo(200);
    }
    engine.clear();
    List<Long> delaysMicros = new ArrayList<>();
    for (int attempt = 0; attempt < 5; attempt++) {
      long delay = checkOneStreamedChat(gateway, onClient);
      delaysMicros.add(delay / 1000);
      if (delay <= FIRST_CHUNK_SLACK_NANOS) {
        break;
      }
    }
    assertThat(delaysMicros.get(delaysMicros.size() - 1))
        .as("first chunk after the engine's first write, µs, per attempt: %s", delaysMicros)
        .isLessThanOrEqualTo(FIRST_CHUNK_SLACK_NANOS / 1000);
  }

  /**
   * Checks one streamed request's spans; returns its first chunk's delay after the engine's first
   * write.
   */
  private long checkOneStreamedChat(
      GatewayProcess gateway, UpstreamFirstChunk.OnClientSpan onClient) throws Exception {
    Exchanged e = exchange(gateway, "/v1/chat/completions", GatewayClient.chatBody(true, 64));
    assertThat(e.result().body()).contains("tok" + (chunks - 1)).contains("[DONE]");
    Span server = e.server();
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    assertThat(attrs.get("gen_ai.operation.name").getStringValue()).isEqualTo("chat");
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("gen_ai.request.stream").getBoolValue()).isTrue();
    assertThat(attrs.get("gen_ai.request.max_tokens").getIntValue()).isEqualTo(64);
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(chunks);
    assertThat(attrs).doesNotContainKeys("llmlat.gateway.first_chunk", "gen_ai.input.messages");

    long firstChunk = attrs.get("llmlat.gateway.first_chunk_unix_nano").getIntValue();
    assertThat(
            server.getEventsList().stream()
                .filter(ev -> ev.getName().equals("gen_ai.first_chunk"))
                .map(Span.Event::getTimeUnixNano)
                .toList())
        .containsExactly(firstChunk);
    assertThat(firstChunk)
        .as("within the SERVER span")
        .isBetween(server.getStartTimeUnixNano(), server.getEndTimeUnixNano());
    // same host clock
    assertThat(firstChunk)
        .as("after the engine wrote its first chunk")
        .isGreaterThanOrEqualTo(e.upstream().firstWriteEpochNanos());
    assertThat(firstChunk)
        .as("before the client read its first byte")
        .isLessThanOrEqualTo(e.result().firstByteEpochNanos());
    long upstreamChunk =
        UpstreamFirstChunk.check(server, e.spans(), e.upstream(), firstChunk, onClient);
    assertThat(e.raw())
        .as("no prompt text in the exported records")
        .doesNotContain(GatewayClient.SECRET_PROMPT);
    System.out.printf(
        "%s: upstream first chunk %d µs and first chunk %d µs after the engine's first write,"
            + " %d µs before the client's first byte%n",
        gateway.name(),
        (upstreamChunk - e.upstream().firstWriteEpochNanos()) / 1000,
        (firstChunk - e.upstream().firstWriteEpochNanos()) / 1000,
        (e.result().firstByteEpochNanos() - firstChunk) / 1000);
    return firstChunk - e.upstream().firstWriteEpochNanos();
  }

  void checkNonStreamedCompletion(GatewayProcess gateway) throws Exception {
    Exchanged e = exchange(gateway, "/v1/completions", GatewayClient.completionBody());
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(e.server().getAttributesList());
    assertThat(attrs.get("gen_ai.operation.name").getStringValue()).isEqualTo("text_completion");
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("gen_ai.request.max_tokens").getIntValue()).isEqualTo(16);
    assertThat(attrs)
        .doesNotContainKeys(
            "gen_ai.request.stream",
            "llmlat.gateway.chunks",
            "llmlat.gateway.first_chunk_unix_nano",
            "llmlat.gateway.first_chunk");
    assertThat(e.spans())
        .as("no first chunk of a body of known length")
        .allSatisfy(
            s ->
                assertThat(s.getEventsList())
                    .noneMatch(
                        ev ->
                            ev.getName().equals("gen_ai.first_chunk")
                                || ev.getName().equals(UpstreamFirstChunk.EVENT)));
    assertThat(e.raw()).doesNotContain(GatewayClient.SECRET_PROMPT);
  }

  /**
   * One request through the gateway, sent in a trace of the test's own (the SERVER span continues
   * it), and that trace as exported to Kafka once it holds the SERVER span and the CLIENT span
   * whose id the engine received as parent.
   */
  Exchanged exchange(GatewayProcess gateway, String path, String body) throws Exception {
    engine.clear();
    String traceId = hex(16);
    GatewayClient.Result result =
        client.post(gateway.baseUrl(), path, body, "00-" + traceId + "-" + hex(8) + "-01");
    assertThat(result.status()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
    FakeEngine.Received upstream = engine.take();
    assertThat(upstream.traceId())
        .as("the gateway's client propagated the trace")
        .isEqualTo(traceId);
    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records =
          topic.trace(
              traceId,
              spans ->
                  spans.stream().anyMatch(GatewayChecks::isServer)
                      && spans.stream()
                          .anyMatch(
                              s -> SpanTopic.hex(s.getSpanId()).equals(upstream.parentSpanId())),
              Duration.ofSeconds(30));
    }
    List<Span> spans = records.stream().flatMap(r -> r.spans().stream()).toList();
    List<Span> servers = spans.stream().filter(GatewayChecks::isServer).toList();
    assertThat(servers)
        .as("SERVER spans of trace %s; gateway log:\n%s", traceId, gateway.log())
        .hasSize(1);
    String raw =
        records.stream()
            .map(r -> new String(r.value(), StandardCharsets.ISO_8859_1))
            .reduce("", String::concat);
    return new Exchanged(result, upstream, servers.get(0), spans, raw);
  }

  private static boolean isServer(Span span) {
    return span.getKind() == Span.SpanKind.SPAN_KIND_SERVER;
  }

  private static String hex(int bytes) {
    byte[] id = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(id);
    id[0] |= 1; // never all zero
    return HexFormat.of().formatHex(id);
  }
}
