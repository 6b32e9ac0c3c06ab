package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Spring Cloud Gateway as its users build and run it: a Spring Boot executable jar with one route
 * in properties ({@code src/it/gateway-apps}, dependencies from Maven Central), started with {@code
 * java -javaagent:... -jar}, the agent's instrumentations all on (its default), in front of the
 * streaming engine. Checked as in {@link GatewayStacksIT}: the first chunk written to the caller,
 * the engine's first chunk as the gateway's HTTP client received it, the {@code gen_ai.*} request
 * attributes, the chunk count, no prompt text.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringCloudGatewayIT {
  private static final int CHUNKS = 5;

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayChecks checks;
  private GatewayProcess webfluxBoot35;
  private GatewayProcess webfluxBoot40;
  private GatewayProcess mvcTomcatBoot35;
  private GatewayProcess mvcJettyBoot40;
  private GatewayProcess webfluxBoot40H2c;

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new FakeEngine(CHUNKS, 40, 15);
    checks = new GatewayChecks(broker, engine, CHUNKS);
    // started together: their start-up is most of this test's time
    CompletableFuture<GatewayProcess> webflux35 = startAsync("scg-webflux-boot35");
    CompletableFuture<GatewayProcess> webflux40 = startAsync("scg-webflux-boot40");
    CompletableFuture<GatewayProcess> mvcTomcat35 = startAsync("scg-webmvc-tomcat-boot35");
    CompletableFuture<GatewayProcess> mvcJetty40 = startAsync("scg-webmvc-jetty-boot40");
    CompletableFuture<GatewayProcess> webflux40H2c =
        startAsync("scg-webflux-boot40", "-Dserver.http2.enabled=true");
    webfluxBoot35 = webflux35.get(180, TimeUnit.SECONDS);
    webfluxBoot40 = webflux40.get(180, TimeUnit.SECONDS);
    mvcTomcatBoot35 = mvcTomcat35.get(180, TimeUnit.SECONDS);
    mvcJettyBoot40 = mvcJetty40.get(180, TimeUnit.SECONDS);
    webfluxBoot40H2c = webflux40H2c.get(180, TimeUnit.SECONDS);
  }

  /** {@code app}'s jar started under the agent, with {@code extraFlags} (Spring properties). */
  private CompletableFuture<GatewayProcess> startAsync(String app, String... extraFlags)
      throws Exception {
    java.nio.file.Path jar = GatewayApps.jar(app);
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            long start = System.nanoTime();
            List<String> flags = GatewayProcess.extensionWithKafka(broker.bootstrapServers());
            flags.removeIf(
                f ->
                    f.startsWith(
                        "-Dotel.instrumentation.")); // every instrumentation, as users run the
            // agent
            flags.addAll(List.of(extraFlags));
            GatewayProcess gateway =
                GatewayProcess.startJar(
                    GatewayProcess.java17OrCurrent(), app, jar, flags, engine.baseUrl());
            System.out.printf(
                "%s listening %.1f s after its start%n", app, (System.nanoTime() - start) / 1e9);
            return gateway;
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
  }

  @AfterAll
  void stop() throws Exception {
    for (GatewayProcess gateway :
        new GatewayProcess[] {
          webfluxBoot35, webfluxBoot40, mvcTomcatBoot35, mvcJettyBoot40, webfluxBoot40H2c
        }) {
      if (gateway != null) {
        gateway.close();
      }
    }
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  void webfluxOnBoot35() throws Exception {
    // Reactor Netty's CLIENT span lasts the whole body: it carries the upstream first chunk too
    checks.checkStreamedChat(webfluxBoot35, UpstreamFirstChunk.OnClientSpan.REQUIRED);
    checks.checkNonStreamedCompletion(webfluxBoot35);
  }

  @Test
  void webfluxOnBoot40() throws Exception {
    checks.checkStreamedChat(webfluxBoot40, UpstreamFirstChunk.OnClientSpan.REQUIRED);
    checks.checkNonStreamedCompletion(webfluxBoot40);
  }

  /**
   * With {@code server.http2.enabled} and no TLS, Spring Boot serves HTTP/1.1 and h2c: a client
   * with prior knowledge gets an HTTP/2 stream, whose SERVER span the extension has the agent make,
   * with the same attributes and a backpressure count (0: the client's windows hold the stream).
   */
  @Test
  void webfluxOnBoot40OverH2c() throws Exception {
    String traceId = BackpressureIT.hex(16);
    H2cStreamClient.Read read =
        H2cStreamClient.post(
            java.net.URI.create(webfluxBoot40H2c.baseUrl()),
            "/v1/chat/completions",
            GatewayClient.chatBody(true, 64).getBytes(java.nio.charset.StandardCharsets.UTF_8),
            "00-" + traceId + "-" + BackpressureIT.hex(8) + "-01",
            1 << 20,
            0,
            0);
    assertThat(read.status()).as("gateway log:\n%s", webfluxBoot40H2c.log()).isEqualTo(200);
    assertThat(read.completeStream()).isTrue();
    List<Span> spans = Http2BackpressureIT.serverAndClientSpans(broker, webfluxBoot40H2c, traceId);
    Span server =
        spans.stream()
            .filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_SERVER)
            .findFirst()
            .orElseThrow();
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(server.getAttributesList());
    assertThat(attrs.get("gen_ai.request.model").getStringValue()).isEqualTo("tinylm-1b");
    assertThat(attrs.get("llmlat.gateway.chunks").getIntValue()).isEqualTo(CHUNKS);
    assertThat(attrs).containsKey("llmlat.gateway.first_chunk_unix_nano");
    assertThat(attrs.get(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT).getIntValue()).isZero();
    assertThat(server.getEventsList())
        .as("the engine's first chunk, as the gateway's client received it")
        .anyMatch(e -> e.getName().equals(LlmlatAttributes.EVENT_UPSTREAM_FIRST_CHUNK));
  }

  @Test
  void serverMvcOnTomcatBoot35() throws Exception {
    // the JDK HttpClient upstream (Spring's default when no other client library is present)
    checks.checkStreamedChat(mvcTomcatBoot35, UpstreamFirstChunk.OnClientSpan.IF_STILL_OPEN);
    checks.checkNonStreamedCompletion(mvcTomcatBoot35);
  }

  @Test
  void serverMvcOnJettyBoot40() throws Exception {
    // Spring picks Jetty's HttpClient here (jetty-client comes with the Jetty starter): its CLIENT
    // span lasts the body
    checks.checkStreamedChat(mvcJettyBoot40, UpstreamFirstChunk.OnClientSpan.REQUIRED);
    checks.checkNonStreamedCompletion(mvcJettyBoot40);
  }
}
