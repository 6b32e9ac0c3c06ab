package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.JdkGatewayMain;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Malformed {@code traceparent} headers at a gateway under the real agent with llmlat's extension:
 * garbage, invalid ids, forbidden versions, oversized and non-ASCII values, repeated headers. Every
 * request must still be served (200, the whole stream) and start a new trace, exported to Kafka as
 * a root server span; a valid header, sent the same way, is continued (so the check can tell).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MalformedTraceparentIT {
  private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String SPAN = "00f067aa0ba902b7";

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess gateway;

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new FakeEngine(3, 5, 2);
    gateway =
        GatewayProcess.start(
            GatewayProcess.currentJava(),
            JdkGatewayMain.class,
            GatewayProcess.extensionWithKafka(broker.bootstrapServers()),
            engine.baseUrl());
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

  static Map<String, List<String>> malformed() {
    Map<String, List<String>> cases = new LinkedHashMap<>();
    cases.put("garbage", List.of("garbage"));
    cases.put("empty", List.of(""));
    cases.put("all-zero trace id", List.of("00-" + "0".repeat(32) + "-" + SPAN + "-01"));
    cases.put("all-zero span id", List.of("00-" + TRACE + "-" + "0".repeat(16) + "-01"));
    cases.put("version ff", List.of("ff-" + TRACE + "-" + SPAN + "-01"));
    cases.put("short trace id", List.of("00-" + TRACE.substring(1) + "-" + SPAN + "-01"));
    cases.put("non-hex", List.of("00-" + TRACE.replace('a', 'z') + "-" + SPAN + "-01"));
    cases.put("bad flags", List.of("00-" + TRACE + "-" + SPAN + "-zz"));
    cases.put("too many fields", List.of("00-" + TRACE + "-" + SPAN + "-01-" + "-".repeat(50)));
    cases.put("oversized 16 KiB", List.of("00-" + "a".repeat(16 * 1024)));
    cases.put("non-ASCII bytes", List.of("00-\u00ff\u00fe\u00e9" + TRACE + "-" + SPAN + "-01"));
    cases.put("two conflicting headers", List.of("00-" + TRACE + "-" + SPAN + "-01", "junk-junk"));
    return cases;
  }

  @Test
  void malformedTraceparentNeverBreaksARequestAndStartsANewTrace() throws Exception {
    Set<String> traces = new HashSet<>();
    Map<String, String> traceOfCase = new LinkedHashMap<>();
    for (Map.Entry<String, List<String>> c : malformed().entrySet()) {
      engine.clear();
      String response = post(gateway.baseUrl(), c.getValue());
      assertThat(response)
          .as(c.getKey())
          .startsWith("HTTP/1.1 200")
          .contains("tok2")
          .contains("[DONE]");
      FakeEngine.Received upstream = engine.take();
      assertThat(upstream.traceparent())
          .as(c.getKey())
          .matches("00-[0-9a-f]{32}-[0-9a-f]{16}-0[0-9a-f]");
      if (!c.getKey().equals("two conflicting headers")) {
        assertThat(upstream.traceId())
            .as(c.getKey() + ": a new trace")
            .isNotEqualTo(TRACE)
            .isNotEqualTo("0".repeat(32));
        assertThat(traces.add(upstream.traceId())).as(c.getKey() + ": a trace of its own").isTrue();
        traceOfCase.put(c.getKey(), upstream.traceId());
      }
    }
    // the gateway's server span of each is a root span, exported like any other
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      for (Map.Entry<String, String> c : traceOfCase.entrySet()) {
        List<Span> spans =
            topic.trace(c.getValue(), 2, Duration.ofSeconds(30)).stream()
                .flatMap(r -> r.spans().stream())
                .toList();
        List<Span> servers =
            spans.stream().filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_SERVER).toList();
        assertThat(servers).as(c.getKey() + "; gateway log:\n" + gateway.log()).hasSize(1);
        assertThat(servers.get(0).getParentSpanId().isEmpty())
            .as(c.getKey() + ": root span")
            .isTrue();
      }
    }
  }

  @Test
  void aValidTraceparentSentTheSameWayIsContinued() throws Exception {
    engine.clear();
    String response = post(gateway.baseUrl(), List.of("00-" + TRACE + "-" + SPAN + "-01"));
    assertThat(response).startsWith("HTTP/1.1 200");
    assertThat(engine.take().traceId()).isEqualTo(TRACE);
  }

  /** A raw HTTP/1.1 request, so header bytes no client library would send reach the gateway. */
  private static String post(String baseUrl, List<String> traceparents) throws Exception {
    URI uri = URI.create(baseUrl);
    byte[] body = GatewayClient.chatBody(true, 3).getBytes(StandardCharsets.UTF_8);
    StringBuilder head =
        new StringBuilder(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Content-Type: application/json\r\nConnection: close\r\nContent-Length: "
                + body.length
                + "\r\n");
    for (String value : traceparents) {
      head.append("traceparent: ").append(value).append("\r\n");
    }
    head.append("\r\n");
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(body);
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }
}
