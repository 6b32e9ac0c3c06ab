package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.ApacheGatewayMain;
import dev.llmlat.agent.gatewayapp.NettyGatewayMain;
import dev.llmlat.agent.gatewayapp.ReactorNettyGatewayMain;
import dev.llmlat.agent.gatewayapp.TomcatGatewayMain;
import dev.llmlat.agent.gatewayapp.VertxGatewayMain;
import io.opentelemetry.proto.common.v1.AnyValue;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The server stacks most gateways run, each as an unmodified gateway process under the real agent
 * and the extension: Reactor Netty (Netty 4.1; what Spring WebFlux and Spring Cloud Gateway serve
 * with), Vert.x's stock reverse proxy (vertx-web-proxy, Netty 4.1), a plain Netty 4.2 server
 * writing from a worker thread, and a servlet on Tomcat 10.1 relaying from an async context. Their
 * SERVER spans carry the first chunk (within 5 ms of the engine's first write), the engine's first
 * chunk as the gateway's client received it (Reactor Netty's, Vert.x's, the JDK's, Apache
 * HttpClient 5's behind a JDK server), the chunk count and the {@code gen_ai.*} request attributes,
 * and no prompt text ({@link GatewayChecks}). A stack no hook covers (here Tomcat with the servlet
 * hook switched off) is marked on its spans and named once in the log.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayStacksIT {
  private static final int CHUNKS = 5;
  private static final String UNSUPPORTED_LOG = "is not one llmlat observes";

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess reactorNetty;
  private GatewayProcess vertx;
  private GatewayProcess netty42;
  private GatewayProcess tomcat;
  private GatewayProcess tomcatUncovered;
  private GatewayProcess apache;
  private GatewayChecks checks;

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new FakeEngine(CHUNKS, 40, 15);
    checks = new GatewayChecks(broker, engine, CHUNKS);
    // started together: the JVMs' start-up is most of this test's time
    CompletableFuture<GatewayProcess> netty =
        startAsync(
            ReactorNettyGatewayMain.class,
            "-Dotel.instrumentation.netty.enabled=true",
            "-Dotel.instrumentation.reactor.enabled=true",
            "-Dotel.instrumentation.reactor-netty.enabled=true");
    CompletableFuture<GatewayProcess> vertxProxy =
        startAsync(
            VertxGatewayMain.class,
            "-Dotel.instrumentation.netty.enabled=true",
            "-Dotel.instrumentation.vertx.enabled=true");
    CompletableFuture<GatewayProcess> plainNetty =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return GatewayProcess.startWithLibraries(
                    GatewayProcess.java17OrCurrent(),
                    NettyGatewayMain.class,
                    GatewayProcess.extensionWithKafka(
                        broker.bootstrapServers(),
                        "-Dotel.instrumentation.netty.enabled=true",
                        "-Dotel.instrumentation.executors.enabled=true"),
                    engine.baseUrl(),
                    TestDirs.netty42());
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    CompletableFuture<GatewayProcess> servlet =
        startAsync(
            TomcatGatewayMain.class,
            "-Dotel.instrumentation.tomcat.enabled=true",
            "-Dotel.instrumentation.servlet.enabled=true");
    CompletableFuture<GatewayProcess> uncovered =
        startAsync(
            TomcatGatewayMain.class,
            "-Dotel.instrumentation.tomcat.enabled=true",
            "-Dotel.instrumentation.servlet.enabled=true",
            "-Dotel.instrumentation.llmlat-gateway-servlet-5.0.enabled=false");
    CompletableFuture<GatewayProcess> apacheClient =
        startAsync(
            ApacheGatewayMain.class, "-Dotel.instrumentation.apache-httpclient.enabled=true");
    reactorNetty = netty.get(120, TimeUnit.SECONDS);
    vertx = vertxProxy.get(120, TimeUnit.SECONDS);
    netty42 = plainNetty.get(120, TimeUnit.SECONDS);
    tomcat = servlet.get(120, TimeUnit.SECONDS);
    tomcatUncovered = uncovered.get(120, TimeUnit.SECONDS);
    apache = apacheClient.get(120, TimeUnit.SECONDS);
  }

  private CompletableFuture<GatewayProcess> startAsync(Class<?> main, String... flags) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return GatewayProcess.start(
                GatewayProcess.java17OrCurrent(),
                main,
                GatewayProcess.extensionWithKafka(broker.bootstrapServers(), flags),
                engine.baseUrl());
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
  }

  @AfterAll
  void stop() throws Exception {
    for (GatewayProcess gateway :
        new GatewayProcess[] {reactorNetty, vertx, netty42, tomcat, tomcatUncovered, apache}) {
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
    checks.checkStreamedChat(reactorNetty, UpstreamFirstChunk.OnClientSpan.REQUIRED);
    checks.checkNonStreamedCompletion(reactorNetty);
  }

  @Test
  void vertxWebProxyGatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    // the engine's parent is the agent's netty-4.1 CLIENT span (under Vert.x's own, which ends at
    // the headers)
    checks.checkStreamedChat(vertx, UpstreamFirstChunk.OnClientSpan.REQUIRED);
    checks.checkNonStreamedCompletion(vertx);
  }

  @Test
  void plainNetty42GatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    assertThat(netty42.log()).contains("NETTY 4.2.");
    checks.checkStreamedChat(
        netty42, UpstreamFirstChunk.OnClientSpan.IF_STILL_OPEN); // JDK HttpClient upstream
    checks.checkNonStreamedCompletion(netty42);
  }

  @Test
  void tomcatServletGatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    checks.checkStreamedChat(
        tomcat, UpstreamFirstChunk.OnClientSpan.IF_STILL_OPEN); // JDK HttpClient upstream
    checks.checkNonStreamedCompletion(tomcat);
  }

  @Test
  void apacheHttpClientUpstreamFirstChunk() throws Exception {
    // execute(request, handler): the agent ends its CLIENT span before the handler reads the body
    checks.checkStreamedChat(apache, UpstreamFirstChunk.OnClientSpan.IF_STILL_OPEN);
    checks.checkNonStreamedCompletion(apache);
  }

  @Test
  void uncoveredServerStackIsMarkedOnItsSpansAndNamedOnceInTheLog() throws Exception {
    for (int i = 0; i < 2; i++) {
      GatewayChecks.Exchanged streamed =
          checks.exchange(
              tomcatUncovered, "/v1/chat/completions", GatewayClient.chatBody(true, 64));
      Map<String, AnyValue> attrs =
          GatewayAgentIT.attributes(streamed.server().getAttributesList());
      assertThat(attrs.get("llmlat.gateway.first_chunk").getStringValue()).isEqualTo("unsupported");
      assertThat(attrs.get("llmlat.gateway.server").getStringValue())
          .isEqualTo("io.opentelemetry.tomcat-10.0");
      assertThat(attrs)
          .doesNotContainKeys("gen_ai.operation.name", "llmlat.gateway.first_chunk_unix_nano");
    }
    GatewayChecks.Exchanged other =
        checks.exchange(tomcatUncovered, "/v1/embeddings", GatewayClient.chatBody(false, 1));
    assertThat(GatewayAgentIT.attributes(other.server().getAttributesList()))
        .as("not an endpoint llmlat reads")
        .doesNotContainKeys("llmlat.gateway.first_chunk", "llmlat.gateway.server");
    String log = tomcatUncovered.log();
    assertThat(log.lines().filter(l -> l.contains(UNSUPPORTED_LOG)).toList())
        .as("gateway log:\n%s", log)
        .singleElement()
        .asString()
        .contains("io.opentelemetry.tomcat-10.0");
  }
}
