package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gateway.internal.UpstreamConnection;
import dev.llmlat.agent.gatewayapp.ApacheGatewayMain;
import dev.llmlat.agent.gatewayapp.JdkGatewayMain;
import dev.llmlat.agent.gatewayapp.JettyClientGatewayMain;
import dev.llmlat.agent.gatewayapp.VertxGatewayMain;
import dev.llmlat.agent.it.ConnectionChecks.Call;
import dev.llmlat.agent.it.ConnectionChecks.Carrier;
import dev.llmlat.semconv.LlmlatAttributes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * How the gateway's HTTP client got its connection to the engine, on the exported spans of
 * unmodified gateways under the agent, each started by the test that checks it (and stopped after).
 *
 * <p>A pool of one connection to the engine and three streamed requests at once: the second and
 * third wait for the stream before them (the pool wait, within max(20 ms, 15 %) of the engine's own
 * log), the first connection is new and the later ones pooled (the engine saw them all on one
 * connection), the pool's size is 1. On Apache HttpClient 5 and Jetty 12's HttpClient behind a JDK
 * server, Spring Cloud Gateway WebFlux (Reactor Netty) as its users run it, Spring Cloud Gateway
 * Server MVC on Jetty (Spring's Jetty request factory, its client capped at one connection per
 * destination), and Vert.x's reverse proxy on Vert.x 4.5 and 5 ({@code PoolOptions.http1MaxSize}
 * 1).
 *
 * <p>The JDK {@code HttpClient} has no such pool: it opens a connection for every request that
 * finds no idle one, and {@code jdk.httpclient.connectionPoolSize=1} only keeps one idle
 * connection. So three requests at once each connect at once (no wait, as the engine's log shows:
 * three connections, all three received while the first streamed), and of two at once afterwards
 * one reuses the one connection kept.
 *
 * <p>An HTTPS engine (a self-signed certificate): the first call's connect and TLS handshake in
 * order, the second call on the pooled connection with neither. On Apache HttpClient 5.5 and 5.3
 * (whose socket factories connect and upgrade, where 5.4 and later have the connection operator's
 * hooks), the JDK HttpClient and Vert.x 4.5.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UpstreamConnectionIT {
  private static final int CONCURRENT = 3;
  private static final int CHUNKS = 8;
  private static final String SCG = "scg-webflux-boot40";
  private static final String SCG_MVC_JETTY = "scg-webmvc-jetty-boot40";
  private static final String VERTX5 = "vertx5-web-proxy";
  private static final String VERTX_INSTRUMENTATION = "-Dotel.instrumentation.vertx.enabled=true";
  private static final String NETTY_INSTRUMENTATION = "-Dotel.instrumentation.netty.enabled=true";

  private TestBroker broker;
  private FakeEngine engine;
  private FakeEngine tlsEngine;
  private SelfSignedCertificate certificate;
  private ConnectionChecks checks;
  private ConnectionChecks tlsChecks;
  private final List<GatewayProcess> gateways = new ArrayList<>();

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    // each stream lasts about 40 + 7 * 30 = 250 ms: what the calls behind it wait for
    engine = new FakeEngine(CHUNKS, 40, 30);
    certificate = SelfSignedCertificate.create();
    tlsEngine = new FakeEngine(CHUNKS, 40, 30, certificate.serverContext());
    checks = new ConnectionChecks(broker, engine);
    tlsChecks = new ConnectionChecks(broker, tlsEngine);
  }

  @AfterEach
  void stopGateways() throws Exception {
    for (GatewayProcess gateway : gateways) {
      gateway.close();
    }
    gateways.clear();
  }

  @AfterAll
  void stop() throws Exception {
    for (FakeEngine e : new FakeEngine[] {engine, tlsEngine}) {
      if (e != null) {
        e.close();
      }
    }
  }

  @Test
  void apacheHttpClientPoolWait() throws Exception {
    GatewayProcess apache =
        start(
            ApacheGatewayMain.class,
            List.of(engine.baseUrl(), "1"),
            "-Dotel.instrumentation.apache-httpclient.enabled=true");
    List<Call> calls =
        checks.checkPoolOfOne(
            apache, CONCURRENT, Carrier.CLIENT, UpstreamConnection.APACHE_HTTPCLIENT_5);
    // HttpClient 5 leases an endpoint, then connects it: the connect follows the lease
    Call first = calls.get(0);
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START));
  }

  @Test
  void jettyClientPoolWait() throws Exception {
    GatewayProcess jetty =
        start(
            JettyClientGatewayMain.class,
            List.of(engine.baseUrl(), "1"),
            "-Dotel.instrumentation.jetty-httpclient.enabled=true");
    List<Call> calls =
        checks.checkPoolOfOne(
            jetty, CONCURRENT, Carrier.CLIENT, UpstreamConnection.JETTY_CLIENT_12);
    // Jetty opens the connection while the exchange is queued: the connect is within the wait
    assertConnectWithinTheWait(calls.get(0));
  }

  @Test
  void springCloudGatewayWebfluxPoolWait() throws Exception {
    String pool = "spring.cloud.gateway.server.webflux.httpclient.pool.";
    GatewayProcess scg =
        startJar(SCG, List.of(engine.baseUrl(), pool + "type=FIXED", pool + "max-connections=1"));
    List<Call> calls =
        checks.checkPoolOfOne(scg, CONCURRENT, Carrier.SERVER, UpstreamConnection.REACTOR_NETTY);
    Call first = calls.get(0);
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED));
  }

  @Test
  void springCloudGatewayServerMvcPoolWait() throws Exception {
    // Server MVC on Jetty proxies through Spring's Jetty request factory: Jetty's client, capped
    GatewayProcess scg =
        startJar(
            SCG_MVC_JETTY,
            List.of(engine.baseUrl(), "llmlat.gateway.jetty-client.max-connections=1"));
    List<Call> calls =
        checks.checkPoolOfOne(scg, CONCURRENT, Carrier.CLIENT, UpstreamConnection.JETTY_CLIENT_12);
    assertConnectWithinTheWait(calls.get(0));
  }

  @Test
  void vertx4PoolWait() throws Exception {
    GatewayProcess vertx =
        start(
            VertxGatewayMain.class,
            List.of(engine.baseUrl(), "1"),
            NETTY_INSTRUMENTATION,
            VERTX_INSTRUMENTATION);
    // Vert.x's pool counts its waiters, not the connections in use
    List<Call> calls =
        checks.checkPoolOfOne(
            vertx,
            CONCURRENT,
            Carrier.SERVER,
            UpstreamConnection.VERTX_HTTP_CLIENT,
            Set.of(LlmlatAttributes.UPSTREAM_POOL_PENDING));
    // Vert.x connects a new connection for the waiter that asked: the connect is within the wait
    assertConnectWithinTheWait(calls.get(0));
  }

  @Test
  void vertx5PoolWait() throws Exception {
    GatewayProcess vertx = startJar(VERTX5, List.of(engine.baseUrl(), "1"));
    assertThat(vertx.log()).contains("VERTX 5.0.7 NETTY 4.2.");
    List<Call> calls =
        checks.checkPoolOfOne(
            vertx,
            CONCURRENT,
            Carrier.SERVER,
            UpstreamConnection.VERTX_HTTP_CLIENT,
            Set.of(LlmlatAttributes.UPSTREAM_POOL_PENDING));
    assertConnectWithinTheWait(calls.get(0));
  }

  @Test
  void jdkHttpClientNeverWaitsAndKeepsOneIdleConnection() throws Exception {
    GatewayProcess jdk =
        start(
            JdkGatewayMain.class,
            List.of(engine.baseUrl()),
            "-Djdk.httpclient.connectionPoolSize=1");
    checks.checkUnboundedPoolKeepingOne(
        jdk, CONCURRENT, Carrier.CLIENT, UpstreamConnection.JDK_HTTP_CLIENT);
  }

  @Test
  void apacheHttpClientTlsHandshakeOnTheFirstCallOnly() throws Exception {
    List<String> flags = new ArrayList<>(certificate.trustFlags());
    flags.add("-Dotel.instrumentation.apache-httpclient.enabled=true");
    GatewayProcess apacheTls =
        start(ApacheGatewayMain.class, List.of(tlsEngine.baseUrl()), flags.toArray(String[]::new));
    checkTlsOnTheFirstCallOnly(apacheTls, Carrier.CLIENT, UpstreamConnection.APACHE_HTTPCLIENT_5);
  }

  @Test
  void apacheHttpClient53TlsHandshakeOnTheFirstCallOnly() throws Exception {
    List<String> flags = new ArrayList<>(certificate.trustFlags());
    flags.add("-Dotel.instrumentation.apache-httpclient.enabled=true");
    GatewayProcess apache53Tls =
        keep(
            GatewayProcess.startWithLibraries(
                GatewayProcess.java17OrCurrent(),
                ApacheGatewayMain.class,
                GatewayProcess.extensionWithKafka(
                    broker.bootstrapServers(), flags.toArray(String[]::new)),
                tlsEngine.baseUrl(),
                TestDirs.httpclient53()));
    checkTlsOnTheFirstCallOnly(apache53Tls, Carrier.CLIENT, UpstreamConnection.APACHE_HTTPCLIENT_5);
  }

  @Test
  void jdkHttpClientTlsHandshakeOnTheFirstCallOnly() throws Exception {
    GatewayProcess jdkTls =
        start(
            JdkGatewayMain.class,
            List.of(tlsEngine.baseUrl()),
            certificate.trustFlags().toArray(String[]::new));
    checkTlsOnTheFirstCallOnly(jdkTls, Carrier.CLIENT, UpstreamConnection.JDK_HTTP_CLIENT);
  }

  @Test
  void vertx4TlsHandshakeOnTheFirstCallOnly() throws Exception {
    List<String> flags = new ArrayList<>(certificate.trustFlags());
    flags.addAll(List.of(NETTY_INSTRUMENTATION, VERTX_INSTRUMENTATION));
    GatewayProcess vertxTls =
        start(VertxGatewayMain.class, List.of(tlsEngine.baseUrl()), flags.toArray(String[]::new));
    checkTlsOnTheFirstCallOnly(vertxTls, Carrier.SERVER, UpstreamConnection.VERTX_HTTP_CLIENT);
  }

  private void checkTlsOnTheFirstCallOnly(
      GatewayProcess gateway, Carrier carrier, String clientStack) throws Exception {
    Call first = tlsChecks.exchange(gateway, carrier, clientStack);
    assertThat(
            first
                .one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START)
                .attributes()
                .get(LlmlatAttributes.UPSTREAM_POOL)
                .getStringValue())
        .isEqualTo(tlsEngine.baseUrl());
    assertThat(
            first
                .one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED)
                .attributes()
                .get(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED)
                .getBoolValue())
        .isFalse();
    List<Long> times =
        new ArrayList<>(
            List.of(
                first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START),
                first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED),
                first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_START),
                first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE),
                first.at(LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN),
                first.at(LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN),
                first.upstream().firstWriteEpochNanos()));
    long acquireStart = first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START);
    long acquired = first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED);
    if (acquired <= times.get(0)) {
      times.addAll(
          0,
          List.of(
              acquireStart, acquired)); // the connection is made once it is leased (Apache, JDK)
    } else {
      // or while the lease waits for it (Vert.x): connect and TLS within the wait
      assertThat(List.of(acquireStart, times.get(0), times.get(3), acquired, times.get(4)))
          .isSorted();
    }
    assertThat(times)
        .as("connect, TLS, request written, then answered (same host clock): %s", first.events())
        .isSorted();
    System.out.printf(
        "%s: TCP connect %.2f ms, TLS handshake %.2f ms%n",
        gateway.name(),
        (first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED)
                - first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START))
            / 1e6,
        (first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE)
                - first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_START))
            / 1e6);

    Call second = tlsChecks.exchange(gateway, carrier, clientStack);
    assertThat(
            second
                .one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED)
                .attributes()
                .get(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED)
                .getBoolValue())
        .isTrue();
    assertThat(second.upstream().remotePort())
        .as("the same connection, in the engine's log")
        .isEqualTo(first.upstream().remotePort());
    assertThat(second.events())
        .extracting(ConnectionChecks.Event::name)
        .as("no connect nor TLS on the pooled connection")
        .doesNotContain(
            LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START,
            LlmlatAttributes.EVENT_UPSTREAM_CONNECTED,
            LlmlatAttributes.EVENT_UPSTREAM_TLS_START,
            LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE);
    assertThat(second.at(LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN))
        .isLessThanOrEqualTo(second.upstream().firstWriteEpochNanos());
  }

  private static void assertConnectWithinTheWait(Call first) {
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START));
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED));
  }

  /**
   * A gateway main class of the test class path under the agent and this extension, with the
   * instrumentation flags given.
   */
  private GatewayProcess start(Class<?> main, List<String> args, String... flags) throws Exception {
    return keep(
        GatewayProcess.start(
            GatewayProcess.java17OrCurrent(),
            main,
            GatewayProcess.extensionWithKafka(broker.bootstrapServers(), flags),
            args));
  }

  /** An app of src/it/gateway-apps, every instrumentation of the agent on, as its users run it. */
  private GatewayProcess startJar(String app, List<String> args) throws Exception {
    Path jar = GatewayApps.jar(app);
    List<String> flags = GatewayProcess.extensionWithKafka(broker.bootstrapServers());
    flags.removeIf(f -> f.startsWith("-Dotel.instrumentation."));
    return keep(GatewayProcess.startJar(GatewayProcess.java17OrCurrent(), app, jar, flags, args));
  }

  private GatewayProcess keep(GatewayProcess gateway) {
    gateways.add(gateway);
    return gateway;
  }
}
