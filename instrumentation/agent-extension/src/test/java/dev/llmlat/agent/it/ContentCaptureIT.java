package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.JdkGatewayMain;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Prompts and completions with the real agent and the real broker: by default no text of either
 * reaches Kafka; opted in, both are on the SERVER span as the GenAI conventions name them, cut at
 * the configured length, and the gateway's log carries the warning.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ContentCaptureIT {
  private static final int CHUNKS = 5;
  private static final String WARNING = "PROMPTS AND COMPLETIONS WILL BE STORED";

  /** The engine's streamed tokens and its non-streamed completion text. */
  private static final String STREAMED = "tok0tok1tok2tok3tok4";

  private static final String COMPLETION = "hello";

  private TestBroker broker;
  private FakeEngine engine;
  private final GatewayClient client = new GatewayClient();

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new FakeEngine(CHUNKS, 5, 2);
  }

  @AfterAll
  void stop() {
    engine.close();
  }

  private record Exchanged(Span server, String allValues, byte[] raw) {}

  private Exchanged exchange(GatewayProcess gateway, String path, String body) throws Exception {
    engine.clear();
    assertThat(client.post(gateway.baseUrl(), path, body).status()).isEqualTo(200);
    String traceId = engine.take().traceId();
    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records = topic.trace(traceId, 2, Duration.ofSeconds(30));
    }
    List<Span> spans = records.stream().flatMap(r -> r.spans().stream()).toList();
    // every attribute and event attribute value of every span of the trace, as text
    String allValues =
        spans.stream()
            .flatMap(
                s ->
                    Stream.concat(
                        s.getAttributesList().stream(),
                        s.getEventsList().stream().flatMap(e -> e.getAttributesList().stream())))
            .map(kv -> kv.getKey() + "=" + kv.getValue())
            .collect(Collectors.joining("\n"));
    byte[] raw =
        records.stream()
            .map(r -> new String(r.value(), StandardCharsets.ISO_8859_1))
            .collect(Collectors.joining())
            .getBytes(StandardCharsets.ISO_8859_1);
    Span server =
        spans.stream()
            .filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_SERVER)
            .findFirst()
            .orElseThrow();
    return new Exchanged(server, allValues, raw);
  }

  @Test
  void byDefaultNoPromptOrCompletionTextReachesKafka() throws Exception {
    try (GatewayProcess gateway =
        GatewayProcess.start(
            GatewayProcess.java17OrCurrent(),
            JdkGatewayMain.class,
            GatewayProcess.extensionWithKafka(broker.bootstrapServers()),
            engine.baseUrl())) {
      for (Exchanged e :
          List.of(
              exchange(gateway, "/v1/chat/completions", GatewayClient.chatBody(true, 64)),
              exchange(gateway, "/v1/completions", GatewayClient.completionBody()))) {
        assertThat(e.allValues()).as("the spans were read").contains("gen_ai.request.model");
        String raw = new String(e.raw(), StandardCharsets.ISO_8859_1);
        assertThat(raw)
            .doesNotContain(GatewayClient.SECRET_PROMPT)
            .doesNotContain("tok1")
            .doesNotContain(COMPLETION)
            .doesNotContain("gen_ai.input.messages")
            .doesNotContain("gen_ai.output.messages");
      }
      assertThat(gateway.log()).doesNotContain(WARNING);
    }
  }

  @Test
  void optedInPromptsAndCompletionsAreOnTheServerSpanCutAtTheLimitWithAWarning() throws Exception {
    int max = 30;
    try (GatewayProcess gateway =
        GatewayProcess.start(
            GatewayProcess.java17OrCurrent(),
            JdkGatewayMain.class,
            GatewayProcess.extensionWithKafka(
                broker.bootstrapServers(),
                "-Dotel.instrumentation.genai.capture-message-content=true",
                "-Dotel.instrumentation.genai.message-content.max-length=" + max),
            engine.baseUrl())) {
      Exchanged chat = exchange(gateway, "/v1/chat/completions", GatewayClient.chatBody(true, 64));
      Map<String, AnyValue> attrs = GatewayAgentIT.attributes(chat.server().getAttributesList());
      String messages = "[{\"role\":\"user\",\"content\":\"" + GatewayClient.SECRET_PROMPT + "\"}]";
      assertThat(attrs.get("gen_ai.input.messages").getStringValue())
          .isEqualTo(
              messages.substring(0, max) + "...[truncated: " + messages.length() + " chars]");
      assertThat(attrs.get("gen_ai.output.messages").getStringValue())
          .isEqualTo(
              "[{\"role\":\"assistant\",\"parts\":[{\"type\":\"text\",\"content\":\""
                  + STREAMED
                  + "\"}]}]");

      Exchanged completion = exchange(gateway, "/v1/completions", GatewayClient.completionBody());
      Map<String, AnyValue> c = GatewayAgentIT.attributes(completion.server().getAttributesList());
      String prompt = "\"" + GatewayClient.SECRET_PROMPT + "\"";
      assertThat(c.get("gen_ai.input.messages").getStringValue())
          .isEqualTo(prompt.substring(0, max) + "...[truncated: " + prompt.length() + " chars]");
      assertThat(c.get("gen_ai.output.messages").getStringValue())
          .contains("\"content\":\"" + COMPLETION + "\"");

      assertThat(GatewayAgentIT.firstLine(gateway.log(), WARNING))
          .as("gateway log:\n%s", gateway.log())
          .isPresent();
      assertThat(GatewayAgentIT.firstLine(gateway.log(), WARNING).orElseThrow())
          .contains("WARN")
          .contains("otel.instrumentation.genai.capture-message-content=true")
          .contains("up to " + max + " characters");
    }
  }
}
