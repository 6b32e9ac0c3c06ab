package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.NettyGatewayMain;
import dev.llmlat.agent.gatewayapp.ReactorNettyGatewayMain;
import dev.llmlat.agent.gatewayapp.TomcatGatewayMain;
import dev.llmlat.agent.gatewayapp.VertxGatewayMain;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The server stacks most gateways run, each as an unmodified gateway process under the real agent
 * and the extension: Reactor Netty (Netty 4.1; what Spring WebFlux and Spring Cloud Gateway serve
 * with), Vert.x's stock reverse proxy (vertx-web-proxy, Netty 4.1), a plain Netty 4.2 server
 * writing from a worker thread, and a servlet on Tomcat 10.1 relaying from an async context. Their SERVER spans carry the
 * first chunk (within 5 ms of the engine's first write), the chunk count and the {@code gen_ai.*}
 * request attributes, and no prompt text. A stack no hook covers (here Tomcat with the servlet hook
 * switched off) is marked on its spans and named once in the log.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayStacksIT {
  private static final int CHUNKS = 5;
  private static final long FIRST_CHUNK_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  private static final String UNSUPPORTED_LOG = "is not one llmlat observes";

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess reactorNetty;
  private GatewayProcess vertx;
  private GatewayProcess netty42;
  private GatewayProcess tomcat;
  private GatewayProcess tomcatUncovered;
  private final GatewayClient client = new GatewayClient();

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new FakeEngine(CHUNKS, 40, 15);
    // started together: the JVMs' start-up is most of this test's time
    CompletableFuture<GatewayProcess> netty = startAsync(ReactorNettyGatewayMain.class,
        "-Dotel.instrumentation.netty.enabled=true",
        "-Dotel.instrumentation.reactor.enabled=true",
        "-Dotel.instrumentation.reactor-netty.enabled=true");
    CompletableFuture<GatewayProcess> vertxProxy = startAsync(VertxGatewayMain.class,
        "-Dotel.instrumentation.netty.enabled=true",
        "-Dotel.instrumentation.vertx.enabled=true");
    CompletableFuture<GatewayProcess> plainNetty = CompletableFuture.supplyAsync(() -> {
      try {
        return GatewayProcess.startWithLibraries(GatewayProcess.java17OrCurrent(), NettyGatewayMain.class,
            GatewayProcess.extensionWithKafka(broker.bootstrapServers(),
                "-Dotel.instrumentation.netty.enabled=true",
                "-Dotel.instrumentation.executors.enabled=true"),
            engine.baseUrl(), TestDirs.netty42());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    CompletableFuture<GatewayProcess> servlet = startAsync(TomcatGatewayMain.class,
        "-Dotel.instrumentation.tomcat.enabled=true",
        "-Dotel.instrumentation.servlet.enabled=true");
    CompletableFuture<GatewayProcess> uncovered = startAsync(TomcatGatewayMain.class,
        "-Dotel.instrumentation.tomcat.enabled=true",
        "-Dotel.instrumentation.servlet.enabled=true",
        "-Dotel.instrumentation.llmlat-gateway-servlet-5.0.enabled=false");
    reactorNetty = netty.get(120, TimeUnit.SECONDS);
    vertx = vertxProxy.get(120, TimeUnit.SECONDS);
    netty42 = plainNetty.get(120, TimeUnit.SECONDS);
    tomcat = servlet.get(120, TimeUnit.SECONDS);
    tomcatUncovered = uncovered.get(120, TimeUnit.SECONDS);
  }

  private CompletableFuture<GatewayProcess> startAsync(Class<?> main, String... flags) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return GatewayProcess.start(GatewayProcess.java17OrCurrent(), main,
            GatewayProcess.extensionWithKafka(broker.bootstrapServers(), flags), engine.baseUrl());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  @AfterAll
  void stop() throws Exception {
    for (GatewayProcess gateway : new GatewayProcess[] {reactorNetty, vertx, netty42, tomcat, tomcatUncovered}) {
      if (gateway != null) {
        gateway.close();
      }
    }
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  void reactorNettyGatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    checkStreamedChat(reactorNetty);
    checkNonStreamedCompletion(reactorNetty);
  }

  @Test
  void vertxWebProxyGatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    checkStreamedChat(vertx);
    checkNonStreamedCompletion(vertx);
  }

  @Test
  void plainNetty42GatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    assertThat(netty42.log()).contains("NETTY 4.2.");
    checkStreamedChat(netty42);
    checkNonStreamedCompletion(netty42);
  }

  @Test
  void tomcatServletGatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    checkStreamedChat(tomcat);
    checkNonStreamedCompletion(tomcat);
  }

  @Test
  void uncoveredServerStackIsMarkedOnItsSpansAndNamedOnceInTheLog() throws Exception {
    for (int i = 0; i < 2; i++) {
      Exchanged streamed = exchange(tomcatUncovered, "/v1/chat/completions", GatewayClient.chatBody(true, 64));
      Map<String, AnyValue> attrs = GatewayAgentIT.attributes(streamed.server().getAttributesList());
      assertThat(attrs.get("llmlat.gateway.first_chunk").getStringValue()).isEqualTo("unsupported");
      assertThat(attrs.get("llmlat.gateway.server").getStringValue()).isEqualTo("io.opentelemetry.tomcat-10.0");
      assertThat(attrs).doesNotContainKeys("gen_ai.operation.name", "llmlat.gateway.first_chunk_unix_nano");
    }
    Exchanged other = exchange(tomcatUncovered, "/v1/embeddings", GatewayClient.chatBody(false, 1));
    assertThat(GatewayAgentIT.attributes(other.server().getAttributesList())).as("not an endpoint llmlat reads")
        .doesNotContainKeys("llmlat.gateway.first_chunk", "llmlat.gateway.server");
    String log = tomcatUncovered.log();
    assertThat(log.lines().filter(l -> l.contains(UNSUPPORTED_LOG)).toList()).as("gateway log:\n%s", log)
        .singleElement().asString().contains("io.opentelemetry.tomcat-10.0");
  }

  /**
   * Warm-up requests, then streamed requests until one's first chunk is within the slack (at most
   * 5: this machine's two cores are shared by the engine, the broker and five gateways).
   */
  private void checkStreamedChat(GatewayProcess gateway) throws Exception {
    for (int i = 0; i < 3; i++) { // warm-up: the relay path's first runs are interpreted
      assertThat(client.post(gateway.baseUrl(), "/v1/chat/completions", GatewayClient.chatBody(true, 8)).status())
          .isEqualTo(200);
    }
    engine.clear();
    List<Long> delaysMicros = new ArrayList<>();
    for (int attempt = 0; attempt < 5; attempt++) {
      long delay = checkOneStreamedChat(gateway);
      delaysMicros.add(delay / 1000);
      if (delay <= FIRST_CHUNK_SLACK_NANOS) {
        break;
      }
    }
    assertThat(delaysMicros.get(delaysMicros.size() - 1))
        .as("first chunk after the engine's first write, µs, per attempt: %s", delaysMicros)
        .isLessThanOrEqualTo(FIRST_CHUNK_SLACK_NANOS / 1000);
  }

  /** Checks one streamed request's SERVER span; returns its first chunk's delay after the engine's first write. */
  private long checkOneStreamedChat(GatewayProcess gateway) throws Exception {
    Exchanged e = exchange(gateway, "/v1/chat/completions", GatewayClient.chatBody(true, 64));
    assertThat(e.result().body()).contains("tok4").contains("[DONE]");
    Span server = e.server();
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    assertThat(attrs.get("gen_ai.operation.name").getStringValue()).isEqualTo("chat");
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("gen_ai.request.stream").getBoolValue()).isTrue();
    assertThat(attrs.get("gen_ai.request.max_tokens").getIntValue()).isEqualTo(64);
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(CHUNKS);
    assertThat(attrs).doesNotContainKeys("llmlat.gateway.first_chunk", "gen_ai.input.messages");

    long firstChunk = attrs.get("llmlat.gateway.first_chunk_unix_nano").getIntValue();
    assertThat(server.getEventsList().stream().filter(ev -> ev.getName().equals("gen_ai.first_chunk"))
        .map(Span.Event::getTimeUnixNano).toList()).containsExactly(firstChunk);
    assertThat(firstChunk).as("within the SERVER span").isBetween(server.getStartTimeUnixNano(), server.getEndTimeUnixNano());
    // same host clock
    assertThat(firstChunk).as("after the engine wrote its first chunk").isGreaterThanOrEqualTo(e.upstream().firstWriteEpochNanos());
    assertThat(firstChunk).as("before the client read its first byte").isLessThanOrEqualTo(e.result().firstByteEpochNanos());
    assertThat(e.raw()).as("no prompt text in the exported records").doesNotContain(GatewayClient.SECRET_PROMPT);
    System.out.printf("%s: first chunk %d µs after the engine's first write, %d µs before the client's first byte%n",
        gateway.name(), (firstChunk - e.upstream().firstWriteEpochNanos()) / 1000,
        (e.result().firstByteEpochNanos() - firstChunk) / 1000);
    return firstChunk - e.upstream().firstWriteEpochNanos();
  }

  private void checkNonStreamedCompletion(GatewayProcess gateway) throws Exception {
    Exchanged e = exchange(gateway, "/v1/completions", GatewayClient.completionBody());
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(e.server().getAttributesList());
    assertThat(attrs.get("gen_ai.operation.name").getStringValue()).isEqualTo("text_completion");
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("gen_ai.request.max_tokens").getIntValue()).isEqualTo(16);
    assertThat(attrs).doesNotContainKeys("gen_ai.request.stream", "llmlat.gateway.chunks",
        "llmlat.gateway.first_chunk_unix_nano", "llmlat.gateway.first_chunk");
    assertThat(e.server().getEventsList()).noneMatch(ev -> ev.getName().equals("gen_ai.first_chunk"));
    assertThat(e.raw()).doesNotContain(GatewayClient.SECRET_PROMPT);
  }

  private record Exchanged(GatewayClient.Result result, FakeEngine.Received upstream, Span server, String raw) {}

  /**
   * One request through the gateway, sent in a trace of the test's own (the SERVER span continues
   * it), and that trace as exported to Kafka once it holds the SERVER span.
   */
  private Exchanged exchange(GatewayProcess gateway, String path, String body) throws Exception {
    engine.clear();
    String traceId = hex(16);
    GatewayClient.Result result = client.post(gateway.baseUrl(), path, body, "00-" + traceId + "-" + hex(8) + "-01");
    assertThat(result.status()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
    FakeEngine.Received upstream = engine.take();
    assertThat(upstream.traceId()).as("the gateway's client propagated the trace").isEqualTo(traceId);
    List<SpanTopic.Record> records;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      records = topic.trace(traceId, spans -> spans.stream().anyMatch(GatewayStacksIT::isServer), Duration.ofSeconds(30));
    }
    List<Span> servers = records.stream().flatMap(r -> r.spans().stream()).filter(GatewayStacksIT::isServer).toList();
    assertThat(servers).as("SERVER spans of trace %s; gateway log:\n%s", traceId, gateway.log()).hasSize(1);
    String raw = records.stream().map(r -> new String(r.value(), StandardCharsets.ISO_8859_1)).reduce("", String::concat);
    return new Exchanged(result, upstream, servers.get(0), raw);
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
