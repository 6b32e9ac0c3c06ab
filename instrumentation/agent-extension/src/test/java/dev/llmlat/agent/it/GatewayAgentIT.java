package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.JdkGatewayMain;
import dev.llmlat.agent.gatewayapp.JettyGatewayMain;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The real agent (2.31.1) plus the shaded extension attached to real gateway processes, spans read
 * back from a real Kafka broker. Ordered: the JDK-server gateway starts while the broker is down
 * (requests stay fast, drops are counted), then the broker comes up at the same address and the
 * same gateway's spans flow; then the spans' content is checked for both server stacks.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayAgentIT {
  private static final int CHUNKS = 5;
  private static final Pattern DROPPED = Pattern.compile("(\\d+) spans dropped");
  private static final Pattern SENT = Pattern.compile("(\\d+) spans sent");

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess jdkGateway;
  private final GatewayClient client = new GatewayClient();

  @BeforeAll
  void startGatewayWithBrokerDown() throws Exception {
    broker = TestBroker.shared();
    broker.stop();
    engine = new FakeEngine(CHUNKS, 40, 15);
    jdkGateway =
        GatewayProcess.start(
            GatewayProcess.java17OrCurrent(),
            JdkGatewayMain.class,
            GatewayProcess.extensionWithKafka(
                broker.bootstrapServers(),
                "-Dotel.exporter.kafka.max.block=200ms",
                "-Dotel.exporter.kafka.log.interval=1s",
                "-Dotel.exporter.kafka.queue.size=4"),
            engine.baseUrl());
  }

  @AfterAll
  void stop() throws Exception {
    if (jdkGateway != null) {
      jdkGateway.close();
    }
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  @Order(1)
  void brokerDownRequestsStayFastAndDropsAreCounted() throws Exception {
    List<Long> latenciesMs = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      GatewayClient.Result r =
          client.post(
              jdkGateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 8));
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.body()).contains("tok4").contains("[DONE]");
      latenciesMs.add(r.latencyNanos() / 1_000_000);
    }
    // the engine itself takes 40 + 4 x 15 = 100 ms; the unreachable broker must add nothing near
    // max.block
    assertThat(latenciesMs.subList(2, latenciesMs.size()))
        .as("after warm-up, ms")
        .allMatch(ms -> ms < 400);
    List<Long> sorted = new ArrayList<>(latenciesMs);
    Collections.sort(sorted);
    assertThat(sorted.get(sorted.size() / 2)).as("p50 ms %s", latenciesMs).isLessThan(180);

    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    long dropped = 0;
    while (dropped == 0 && System.nanoTime() < deadline) {
      dropped = lastNumber(DROPPED, jdkGateway.log());
      Thread.sleep(250);
    }
    assertThat(dropped)
        .as("dropped spans in the exporter's log lines:\n%s", jdkGateway.log())
        .isPositive();
  }

  @Test
  @Order(2)
  void brokerBackSpansFlowAgain() throws Exception {
    broker.ensureRunning();
    engine.clear();
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      long deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
      List<String> sentTraces = new ArrayList<>();
      boolean arrived = false;
      while (!arrived && System.nanoTime() < deadline) {
        client.post(jdkGateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 8));
        sentTraces.add(engine.take().traceId());
        arrived =
            topic
                .pollUntil(
                    records -> records.stream().anyMatch(r -> sentTraces.contains(r.key())),
                    Duration.ofSeconds(1))
                .stream()
                .anyMatch(r -> sentTraces.contains(r.key()));
      }
      assertThat(arrived)
          .as("spans reached Kafka after the broker returned; gateway log:\n%s", jdkGateway.log())
          .isTrue();
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (lastNumber(SENT, jdkGateway.log()) == 0 && System.nanoTime() < deadline) {
      Thread.sleep(250);
    }
    assertThat(lastNumber(SENT, jdkGateway.log())).as("sent spans in the log lines").isPositive();
  }

  @Test
  @Order(3)
  void jdkHttpServerGatewaySpansCarryGenAiFirstChunkAndTraceparent() throws Exception {
    broker.ensureRunning();
    Map<String, AnyValue> resource = checkStreamedChat(jdkGateway);
    // to Kafka the command line stays home by default: every record would carry it
    assertThat(resource)
        .containsKeys("process.pid", "process.executable.path", "os.description")
        .doesNotContainKeys("process.command_line", "process.command_args");
    checkNonStreamedCompletion(jdkGateway);
  }

  @Test
  @Order(4)
  void jetty12GatewaySpansCarryGenAiFirstChunkAndTraceparent() throws Exception {
    broker.ensureRunning();
    try (GatewayProcess jetty =
        GatewayProcess.start(
            GatewayProcess.currentJava(),
            JettyGatewayMain.class,
            GatewayProcess.extensionWithKafka(
                broker.bootstrapServers(),
                "-Dotel.exporter.kafka.log.interval=1s",
                "-Dotel.resource.disabled.keys=os.description"),
            engine.baseUrl())) {
      Map<String, AnyValue> resource = checkStreamedChat(jetty);
      // the user's own choice of disabled keys stands
      assertThat(resource).containsKey("process.command_line").doesNotContainKey("os.description");
      checkNonStreamedCompletion(jetty);
    }
  }

  /** Checks one streamed chat through {@code gateway}; returns the resource its records carried. */
  private Map<String, AnyValue> checkStreamedChat(GatewayProcess gateway) throws Exception {
    engine.clear();
    GatewayClient.Result result =
        client.post(gateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 64));
    assertThat(result.status()).isEqualTo(200);
    FakeEngine.Received upstream = engine.take();
    assertThat(upstream.traceparent())
        .as("traceparent reached the engine")
        .matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[0-9a-f]");
    String traceId = upstream.traceId();

    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records = topic.trace(traceId, 2, Duration.ofSeconds(30));
    }
    assertThat(records)
        .as("records of trace %s; gateway log:\n%s", traceId, gateway.log())
        .isNotEmpty();
    Map<String, AnyValue> resource = Map.of();
    for (SpanTopic.Record record : records) {
      assertThat(record.key()).as("record key = trace id").isEqualTo(traceId);
      assertThat(record.spans()).allMatch(s -> SpanTopic.hex(s.getTraceId()).equals(traceId));
      assertThat(new String(record.value(), StandardCharsets.ISO_8859_1))
          .doesNotContain(GatewayClient.SECRET_PROMPT);
      for (ResourceSpans rs : record.request().getResourceSpansList()) {
        resource = attributes(rs.getResource().getAttributesList());
        assertThat(resource.get("llmlat.layer").getStringValue()).isEqualTo("gateway");
        assertThat(resource.get("service.name").getStringValue()).isEqualTo("gateway");
      }
    }
    List<Span> spans = records.stream().flatMap(r -> r.spans().stream()).toList();
    Span server = only(spans, Span.SpanKind.SPAN_KIND_SERVER);
    Span clientSpan = only(spans, Span.SpanKind.SPAN_KIND_CLIENT);

    // traceparent received upstream = the CLIENT span's context, child of the SERVER span
    assertThat(upstream.parentSpanId()).isEqualTo(SpanTopic.hex(clientSpan.getSpanId()));
    assertThat(clientSpan.getParentSpanId()).isEqualTo(server.getSpanId());

    Map<String, AnyValue> attrs = attributes(server.getAttributesList());
    assertThat(attrs.get("gen_ai.operation.name").getStringValue()).isEqualTo("chat");
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("gen_ai.request.stream").getBoolValue()).isTrue();
    assertThat(attrs.get("gen_ai.request.max_tokens").getIntValue()).isEqualTo(64);
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(CHUNKS);
    assertThat(attrs)
        .as("an observed stack is not marked unsupported")
        .doesNotContainKey("llmlat.gateway.first_chunk");

    long firstChunk = attrs.get("llmlat.gateway.first_chunk_unix_nano").getIntValue();
    List<Span.Event> firstChunkEvents =
        server.getEventsList().stream()
            .filter(e -> e.getName().equals("gen_ai.first_chunk"))
            .toList();
    assertThat(firstChunkEvents).hasSize(1);
    assertThat(firstChunkEvents.get(0).getTimeUnixNano()).isEqualTo(firstChunk);
    assertThat(firstChunk)
        .as("first chunk within the SERVER span")
        .isBetween(server.getStartTimeUnixNano(), server.getEndTimeUnixNano());
    // same host clock: causality against the engine's first write and the client's first byte
    assertThat(firstChunk)
        .as("after the engine wrote its first chunk")
        .isGreaterThanOrEqualTo(upstream.firstWriteEpochNanos());
    assertThat(firstChunk)
        .as("before the client read its first byte")
        .isLessThanOrEqualTo(result.firstByteEpochNanos());
    // the JDK HttpClient's CLIENT span ends at the response headers: the SERVER span has the
    // upstream first chunk
    UpstreamFirstChunk.check(
        server, spans, upstream, firstChunk, UpstreamFirstChunk.OnClientSpan.IF_STILL_OPEN);
    assertThat(
            attributes(server.getAttributesList()).values().stream()
                .map(AnyValue::toString)
                .collect(Collectors.joining()))
        .doesNotContain(GatewayClient.SECRET_PROMPT);
    return resource;
  }

  private void checkNonStreamedCompletion(GatewayProcess gateway) throws Exception {
    engine.clear();
    GatewayClient.Result result =
        client.post(gateway.baseUrl(), "/v1/completions", GatewayClient.completionBody());
    assertThat(result.status()).isEqualTo(200);
    String traceId = engine.take().traceId();
    List<Span> spans;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      spans =
          topic.trace(traceId, 2, Duration.ofSeconds(30)).stream()
              .flatMap(r -> r.spans().stream())
              .toList();
    }
    Span server = only(spans, Span.SpanKind.SPAN_KIND_SERVER);
    Map<String, AnyValue> attrs = attributes(server.getAttributesList());
    assertThat(attrs.get("gen_ai.operation.name").getStringValue()).isEqualTo("text_completion");
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("gen_ai.request.max_tokens").getIntValue()).isEqualTo(16);
    assertThat(attrs)
        .doesNotContainKeys(
            "gen_ai.request.stream",
            "llmlat.gateway.chunks",
            "llmlat.gateway.first_chunk_unix_nano");
    assertThat(server.getEventsList())
        .noneMatch(
            e ->
                e.getName().equals("gen_ai.first_chunk")
                    || e.getName().equals(UpstreamFirstChunk.EVENT));
  }

  static Span only(List<Span> spans, Span.SpanKind kind) {
    List<Span> ofKind = spans.stream().filter(s -> s.getKind() == kind).toList();
    assertThat(ofKind).as("%s spans in %s", kind, spans).hasSize(1);
    return ofKind.get(0);
  }

  static Map<String, AnyValue> attributes(List<KeyValue> list) {
    return list.stream()
        .collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue, (a, b) -> b));
  }

  static long lastNumber(Pattern pattern, String text) {
    Matcher m = pattern.matcher(text);
    long last = 0;
    while (m.find()) {
      last = Long.parseLong(m.group(1));
    }
    return last;
  }

  static Optional<String> firstLine(String text, String containing) {
    return text.lines().filter(l -> l.contains(containing)).findFirst();
  }
}
