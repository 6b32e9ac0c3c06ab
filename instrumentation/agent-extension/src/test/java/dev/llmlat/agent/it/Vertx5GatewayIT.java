package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Vert.x 5's stock reverse proxy (vertx-web-proxy 5.0 on a router, its HTTP server and {@code
 * HttpClientAgent} on Netty 4.2) as an executable jar ({@code src/it/gateway-apps}: Vert.x 5 cannot
 * share the test class path with the Vert.x 4.5 of {@link GatewayStacksIT}), started with {@code
 * java -javaagent:... -jar}, every instrumentation of the agent on (its default). Checked as the
 * Vert.x 4 gateway is ({@link GatewayChecks}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class Vertx5GatewayIT {
  private static final int CHUNKS = 5;
  private static final String APP = "vertx5-web-proxy";

  private FakeEngine engine;
  private GatewayChecks checks;
  private GatewayProcess gateway;

  @BeforeAll
  void start() throws Exception {
    TestBroker broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new FakeEngine(CHUNKS, 40, 15);
    checks = new GatewayChecks(broker, engine, CHUNKS);
    Path jar = GatewayApps.jar(APP);
    List<String> flags = GatewayProcess.extensionWithKafka(broker.bootstrapServers());
    flags.removeIf(
        f ->
            f.startsWith(
                "-Dotel.instrumentation.")); // every instrumentation, as users run the agent
    long start = System.nanoTime();
    gateway =
        GatewayProcess.startJar(
            GatewayProcess.java17OrCurrent(), APP, jar, flags, engine.baseUrl());
    System.out.printf(
        "%s listening %.1f s after its start%n", APP, (System.nanoTime() - start) / 1e9);
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
  void vertx5WebProxyGatewaySpansCarryFirstChunkAndGenAi() throws Exception {
    assertThat(gateway.log()).contains("VERTX 5.0.7 NETTY 4.2.");
    // as on Vert.x 4, two sibling CLIENT spans: Vert.x's own ends at the response headers; the
    // engine's parent is the agent's Netty one, which lasts the body
    checks.checkStreamedChat(gateway, UpstreamFirstChunk.OnClientSpan.REQUIRED);
    checks.checkNonStreamedCompletion(gateway);
  }
}
