package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gateway.internal.UpstreamConnection;
import dev.llmlat.agent.gatewayapp.ApacheGatewayMain;
import dev.llmlat.agent.gatewayapp.JettyClientGatewayMain;
import dev.llmlat.agent.it.ConnectionChecks.Call;
import dev.llmlat.agent.it.ConnectionChecks.Carrier;
import dev.llmlat.semconv.LlmlatAttributes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * How the gateway's HTTP client got its connection to the engine, on the exported spans of
 * unmodified gateways under the agent: Apache HttpClient 5 and Jetty 12's HttpClient behind a JDK
 * server, and Spring Cloud Gateway WebFlux (Reactor Netty) as its users run it, each with a pool of
 * one connection to the engine and three streamed requests at once: the second and third wait for
 * the stream before them (the pool wait, within max(20 ms, 15 %) of the engine's own log), the first
 * connection is new and the later ones pooled, the pool's size is 1. And Apache HttpClient 5 to an
 * HTTPS engine (a self-signed certificate), as 5.5 and as 5.3 (whose socket factories connect and
 * upgrade, where 5.4 and later have the connection operator's hooks): the first call's connect and
 * TLS handshake in order, the second call on the pooled connection with neither.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UpstreamConnectionIT {
  private static final int CHUNKS = 8;
  private static final int CONCURRENT = 3;
  private static final String SCG = "scg-webflux-boot40";

  private TestBroker broker;
  private FakeEngine engine;
  private FakeEngine tlsEngine;
  private ConnectionChecks checks;
  private ConnectionChecks tlsChecks;
  private final List<GatewayProcess> gateways = new ArrayList<>();
  private GatewayProcess apache;
  private GatewayProcess jetty;
  private GatewayProcess scg;
  private GatewayProcess apacheTls;
  private GatewayProcess apache53Tls;

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    // each stream lasts about 40 + 7 * 30 = 250 ms: what the calls behind it wait for
    engine = new FakeEngine(CHUNKS, 40, 30);
    SelfSignedCertificate certificate = SelfSignedCertificate.create();
    tlsEngine = new FakeEngine(CHUNKS, 40, 30, certificate.serverContext());
    checks = new ConnectionChecks(broker, engine);
    tlsChecks = new ConnectionChecks(broker, tlsEngine);
    Path scgJar = GatewayApps.jar(SCG);
    // started together: their start-up is most of this test's time
    CompletableFuture<GatewayProcess> apacheStart = startAsync(ApacheGatewayMain.class, List.of(engine.baseUrl(), "1"),
        List.of("-Dotel.instrumentation.apache-httpclient.enabled=true"));
    CompletableFuture<GatewayProcess> jettyStart = startAsync(JettyClientGatewayMain.class, List.of(engine.baseUrl(), "1"),
        List.of("-Dotel.instrumentation.jetty-httpclient.enabled=true"));
    List<String> tlsFlags = new ArrayList<>(certificate.trustFlags());
    tlsFlags.add("-Dotel.instrumentation.apache-httpclient.enabled=true");
    CompletableFuture<GatewayProcess> apacheTlsStart = startAsync(ApacheGatewayMain.class, List.of(tlsEngine.baseUrl()),
        tlsFlags);
    CompletableFuture<GatewayProcess> apache53TlsStart = CompletableFuture.supplyAsync(() -> {
      try {
        return GatewayProcess.startWithLibraries(GatewayProcess.java17OrCurrent(), ApacheGatewayMain.class,
            GatewayProcess.extensionWithKafka(broker.bootstrapServers(), tlsFlags.toArray(String[]::new)),
            tlsEngine.baseUrl(), TestDirs.httpclient53());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    CompletableFuture<GatewayProcess> scgStart = CompletableFuture.supplyAsync(() -> {
      try {
        List<String> flags = GatewayProcess.extensionWithKafka(broker.bootstrapServers());
        flags.removeIf(f -> f.startsWith("-Dotel.instrumentation.")); // every instrumentation, as users run the agent
        String pool = "spring.cloud.gateway.server.webflux.httpclient.pool.";
        return GatewayProcess.startJar(GatewayProcess.java17OrCurrent(), SCG, scgJar, flags,
            List.of(engine.baseUrl(), pool + "type=FIXED", pool + "max-connections=1"));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    apache = keep(apacheStart);
    jetty = keep(jettyStart);
    apacheTls = keep(apacheTlsStart);
    apache53Tls = keep(apache53TlsStart);
    scg = keep(scgStart);
  }

  private GatewayProcess keep(CompletableFuture<GatewayProcess> start) throws Exception {
    GatewayProcess gateway = start.get(180, TimeUnit.SECONDS);
    gateways.add(gateway);
    return gateway;
  }

  private CompletableFuture<GatewayProcess> startAsync(Class<?> main, List<String> args, List<String> flags) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return GatewayProcess.start(GatewayProcess.java17OrCurrent(), main,
            GatewayProcess.extensionWithKafka(broker.bootstrapServers(), flags.toArray(String[]::new)), args);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  @AfterAll
  void stop() throws Exception {
    for (GatewayProcess gateway : gateways) {
      gateway.close();
    }
    for (FakeEngine e : new FakeEngine[] {engine, tlsEngine}) {
      if (e != null) {
        e.close();
      }
    }
  }

  @Test
  void apacheHttpClientPoolWait() throws Exception {
    List<Call> calls = checks.checkPoolOfOne(apache, CONCURRENT, Carrier.CLIENT, UpstreamConnection.APACHE_HTTPCLIENT_5);
    // HttpClient 5 leases an endpoint, then connects it: the connect follows the lease
    Call first = calls.get(0);
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START));
    assertBodyWrittenAfterHeaders(calls);
  }

  @Test
  void jettyClientPoolWait() throws Exception {
    List<Call> calls = checks.checkPoolOfOne(jetty, CONCURRENT, Carrier.CLIENT, UpstreamConnection.JETTY_CLIENT_12);
    // Jetty opens the connection while the exchange is queued: the connect is within the wait
    Call first = calls.get(0);
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START));
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED));
    assertBodyWrittenAfterHeaders(calls);
  }

  @Test
  void springCloudGatewayWebfluxPoolWait() throws Exception {
    List<Call> calls = checks.checkPoolOfOne(scg, CONCURRENT, Carrier.SERVER, UpstreamConnection.REACTOR_NETTY);
    Call first = calls.get(0);
    assertThat(first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED))
        .isLessThanOrEqualTo(first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED));
    assertBodyWrittenAfterHeaders(calls);
  }

  @Test
  void apacheHttpClientTlsHandshakeOnTheFirstCallOnly() throws Exception {
    checkTlsOnTheFirstCallOnly(apacheTls);
  }

  @Test
  void apacheHttpClient53TlsHandshakeOnTheFirstCallOnly() throws Exception {
    checkTlsOnTheFirstCallOnly(apache53Tls);
  }

  private void checkTlsOnTheFirstCallOnly(GatewayProcess apacheTls) throws Exception {
    Call first = tlsChecks.exchange(apacheTls, Carrier.CLIENT, UpstreamConnection.APACHE_HTTPCLIENT_5);
    assertThat(first.one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START).attributes()
        .get(LlmlatAttributes.UPSTREAM_POOL).getStringValue()).isEqualTo(tlsEngine.baseUrl());
    assertThat(first.one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED).attributes()
        .get(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED).getBoolValue()).isFalse();
    assertThat(List.of(
            first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRE_START),
            first.at(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED),
            first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START),
            first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED),
            first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_START),
            first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE),
            first.at(LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN),
            first.at(LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN),
            first.upstream().firstWriteEpochNanos()))
        .as("acquire, connect, TLS, request written, then answered (same host clock)").isSorted();
    System.out.printf("%s: TCP connect %.2f ms, TLS handshake %.2f ms%n", apacheTls.name(),
        (first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECTED) - first.at(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START)) / 1e6,
        (first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE) - first.at(LlmlatAttributes.EVENT_UPSTREAM_TLS_START)) / 1e6);

    Call second = tlsChecks.exchange(apacheTls, Carrier.CLIENT, UpstreamConnection.APACHE_HTTPCLIENT_5);
    assertThat(second.one(LlmlatAttributes.EVENT_UPSTREAM_ACQUIRED).attributes()
        .get(LlmlatAttributes.UPSTREAM_CONNECTION_REUSED).getBoolValue()).isTrue();
    assertThat(second.events()).extracting(ConnectionChecks.Event::name).as("no connect nor TLS on the pooled connection")
        .doesNotContain(LlmlatAttributes.EVENT_UPSTREAM_CONNECT_START, LlmlatAttributes.EVENT_UPSTREAM_CONNECTED,
            LlmlatAttributes.EVENT_UPSTREAM_TLS_START, LlmlatAttributes.EVENT_UPSTREAM_TLS_DONE);
    assertThat(second.at(LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN))
        .isLessThanOrEqualTo(second.upstream().firstWriteEpochNanos());
  }

  private static void assertBodyWrittenAfterHeaders(List<Call> calls) {
    for (Call call : calls) {
      assertThat(call.at(LlmlatAttributes.EVENT_UPSTREAM_HEADERS_WRITTEN)).as("headers before body: %s", call.events())
          .isLessThanOrEqualTo(call.at(LlmlatAttributes.EVENT_UPSTREAM_BODY_WRITTEN));
    }
  }
}
