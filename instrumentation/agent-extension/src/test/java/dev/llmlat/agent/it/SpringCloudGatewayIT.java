package dev.llmlat.agent.it;

import java.util.List;
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
    webfluxBoot35 = webflux35.get(180, TimeUnit.SECONDS);
    webfluxBoot40 = webflux40.get(180, TimeUnit.SECONDS);
    mvcTomcatBoot35 = mvcTomcat35.get(180, TimeUnit.SECONDS);
    mvcJettyBoot40 = mvcJetty40.get(180, TimeUnit.SECONDS);
  }

  private CompletableFuture<GatewayProcess> startAsync(String app) throws Exception {
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
        new GatewayProcess[] {webfluxBoot35, webfluxBoot40, mvcTomcatBoot35, mvcJettyBoot40}) {
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
