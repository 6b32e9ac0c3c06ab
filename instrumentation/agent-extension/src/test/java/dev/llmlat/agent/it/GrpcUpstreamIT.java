package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.GrpcUpstreamGatewayMain;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A gateway that calls its engine over gRPC (grpc-java, {@link GrpcUpstreamGatewayMain}) under the
 * agent: the engine's first message is the upstream first chunk on the gateway's SERVER span,
 * naming the agent's gRPC CLIENT span whose {@code traceparent} the engine received, timed after
 * the engine sent it and before the gateway relayed it; the chunks and the first chunk the gateway
 * wrote to its caller are the HTTP server's as ever.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GrpcUpstreamIT {
  private static final int MESSAGES = 12;

  private TestBroker broker;
  private GrpcEngine engine;
  private GatewayProcess gateway;
  private final GatewayClient client = new GatewayClient();

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new GrpcEngine(MESSAGES, 150, 10);
    gateway =
        GatewayProcess.start(
            GatewayProcess.java17OrCurrent(),
            GrpcUpstreamGatewayMain.class,
            GatewayProcess.extensionWithKafka(
                broker.bootstrapServers(), "-Dotel.instrumentation.grpc.enabled=true"),
            List.of(engine.target()));
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
  void theEnginesFirstMessageIsTheUpstreamFirstChunk() throws Exception {
    GatewayClient.Result result =
        client.post(gateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 64));
    assertThat(result.status()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
    FakeEngine.Received upstream = engine.take();
    assertThat(upstream.traceparent())
        .as("traceparent reached the engine in the call's metadata")
        .matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[0-9a-f]");

    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records = topic.trace(upstream.traceId(), 2, Duration.ofSeconds(30));
    }
    List<Span> spans = records.stream().flatMap(r -> r.spans().stream()).toList();
    Span server = GatewayAgentIT.only(spans, Span.SpanKind.SPAN_KIND_SERVER);
    Span grpcClient = GatewayAgentIT.only(spans, Span.SpanKind.SPAN_KIND_CLIENT);
    System.out.printf(
        "gRPC upstream: CLIENT span %s, SERVER span events %s%n",
        grpcClient.getName(), server.getEventsList().stream().map(Span.Event::getName).toList());
    assertThat(grpcClient.getName()).isEqualTo("llmlat.test.Engine/Generate");
    assertThat(SpanTopic.hex(grpcClient.getSpanId())).isEqualTo(upstream.parentSpanId());
    assertThat(grpcClient.getParentSpanId()).isEqualTo(server.getSpanId());

    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(MESSAGES);
    long firstChunk = attrs.get("llmlat.gateway.first_chunk_unix_nano").getIntValue();
    long upstreamFirst =
        UpstreamFirstChunk.check(
            server, spans, upstream, firstChunk, UpstreamFirstChunk.OnClientSpan.REQUIRED);
    assertThat(upstreamFirst)
        .as("the engine's first message arrived after its prefill")
        .isGreaterThan(upstream.arrivalEpochNanos());
  }
}
