package dev.llmlat.agent.it;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.agent.gatewayapp.JdkGatewayMain;
import dev.llmlat.agent.gatewayapp.ReactorNettyGatewayMain;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The tenant with the real agent and the real broker: requests for different tenants through a JDK
 * HttpServer gateway and a Reactor Netty one (Netty 4.1) get their own {@code llmlat.tenant} on
 * their SERVER spans; the JDK gateway also takes it from the {@code user} field or a hash of the
 * API key (never the key); a bad setting is named in the log and records nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TenantIT {
  private static final String SOURCE = "-Dotel.instrumentation.llmlat.tenant.source=";
  private static final String KEY_A = "sk-tenant-a";
  private static final String KEY_B = "sk-tenant-b";

  private TestBroker broker;
  private FakeEngine engine;
  private GatewayProcess jdkHeader;
  private GatewayProcess nettyHeader;
  private GatewayProcess jdkUser;
  private GatewayProcess jdkKeyHash;
  private GatewayProcess jdkBadSetting;

  /** The SERVER span of the last request, as exported. */
  private Span lastServer;

  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  @BeforeAll
  void start() throws Exception {
    broker = TestBroker.shared();
    broker.ensureRunning();
    engine = new FakeEngine(3, 5, 2);
    // started together: the JVMs' start-up is most of this test's time
    CompletableFuture<GatewayProcess> header = startAsync(JdkGatewayMain.class, SOURCE + "header");
    CompletableFuture<GatewayProcess> netty =
        startAsync(
            ReactorNettyGatewayMain.class,
            SOURCE + "header",
            "-Dotel.instrumentation.llmlat.tenant.header=X-Org",
            "-Dotel.instrumentation.netty.enabled=true",
            "-Dotel.instrumentation.reactor.enabled=true",
            "-Dotel.instrumentation.reactor-netty.enabled=true");
    CompletableFuture<GatewayProcess> user = startAsync(JdkGatewayMain.class, SOURCE + "user");
    CompletableFuture<GatewayProcess> keyHash =
        startAsync(JdkGatewayMain.class, SOURCE + "api-key-hash");
    CompletableFuture<GatewayProcess> bad = startAsync(JdkGatewayMain.class, SOURCE + "tenant-id");
    jdkHeader = header.get(120, TimeUnit.SECONDS);
    nettyHeader = netty.get(120, TimeUnit.SECONDS);
    jdkUser = user.get(120, TimeUnit.SECONDS);
    jdkKeyHash = keyHash.get(120, TimeUnit.SECONDS);
    jdkBadSetting = bad.get(120, TimeUnit.SECONDS);
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
        new GatewayProcess[] {jdkHeader, nettyHeader, jdkUser, jdkKeyHash, jdkBadSetting}) {
      if (gateway != null) {
        gateway.close();
      }
    }
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  void eachRequestsTenantHeaderIsOnItsServerSpan() throws Exception {
    for (String tenant : List.of("acme", "globex")) {
      assertThat(tenantOf(jdkHeader, body(null), "x-tenant-id", "  " + tenant + " "))
          .isEqualTo(tenant);
      assertThat(tenantOf(nettyHeader, body(null), "X-Org", tenant, "x-tenant-id", "not-this-one"))
          .isEqualTo(tenant);
    }
    assertThat(tenantOf(jdkHeader, body("team-a"))).as("no header, no tenant").isNull();
    assertThat(GatewayAgentIT.firstLine(nettyHeader.log(), "llmlat.tenant"))
        .as("gateway log:\n%s", nettyHeader.log())
        .hasValueSatisfying(
            line -> assertThat(line).contains("INFO").endsWith("from the request header x-org"));
  }

  @Test
  void theUserFieldIsTheTenant() throws Exception {
    assertThat(tenantOf(jdkUser, body("team-a"), "x-tenant-id", "not-this-one"))
        .isEqualTo("team-a");
    assertThat(tenantOf(jdkUser, body("team-b"))).isEqualTo("team-b");
    assertThat(tenantOf(jdkUser, body(null))).isNull();
  }

  @Test
  void theApiKeyIsHashedNeverExported() throws Exception {
    // the first 16 hex characters of SHA-256 of each key, computed with sha256sum
    assertThat(tenantOf(jdkKeyHash, body(null), "Authorization", "Bearer " + KEY_A))
        .isEqualTo("key-43b53901e1469bd7");
    assertThat(tenantOf(jdkKeyHash, body(null), "Authorization", "Bearer " + KEY_B))
        .isEqualTo("key-2ee2fc626331c5f5");
    assertThat(tenantOf(jdkKeyHash, body(null), "api-key", KEY_A))
        .isEqualTo("key-43b53901e1469bd7");
    assertThat(lastServer.toString()).doesNotContain(KEY_A).doesNotContain("sk-tenant");
  }

  @Test
  void aBadSettingIsNamedInTheLogAndRecordsNothing() throws Exception {
    assertThat(tenantOf(jdkBadSetting, body("team-a"), "x-tenant-id", "acme")).isNull();
    assertThat(GatewayAgentIT.firstLine(jdkBadSetting.log(), "tenant.source"))
        .as("gateway log:\n%s", jdkBadSetting.log())
        .hasValueSatisfying(
            line ->
                assertThat(line)
                    .contains("WARN")
                    .contains("otel.instrumentation.llmlat.tenant.source=\"tenant-id\"")
                    .contains("no tenant is recorded"));
  }

  private static String body(String user) {
    return "{\"model\":\"tinylm-1b\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":true,"
        + "\"max_tokens\":8"
        + (user == null ? "" : ",\"user\":\"" + user + "\"")
        + "}";
  }

  /**
   * Sends a streamed chat with the headers (name, value, ...); the {@code llmlat.tenant} of its
   * SERVER span, or null.
   */
  private String tenantOf(GatewayProcess gateway, String body, String... headers) throws Exception {
    String traceId = hex(16);
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/v1/chat/completions"))
            .header("Content-Type", "application/json")
            .header("traceparent", "00-" + traceId + "-" + hex(8) + "-01")
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    HttpResponse<String> response =
        client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as("gateway log:\n%s", gateway.log()).isEqualTo(200);
    List<Span> servers;
    try (SpanTopic topic = new SpanTopic(broker.bootstrapServers())) {
      servers =
          topic
              .trace(
                  traceId,
                  spans -> spans.stream().anyMatch(TenantIT::isServer),
                  Duration.ofSeconds(30))
              .stream()
              .flatMap(r -> r.spans().stream())
              .filter(TenantIT::isServer)
              .toList();
    }
    assertThat(servers)
        .as("SERVER spans of trace %s; gateway log:\n%s", traceId, gateway.log())
        .hasSize(1);
    lastServer = servers.get(0);
    Map<String, AnyValue> attrs = GatewayAgentIT.attributes(lastServer.getAttributesList());
    assertThat(attrs).as("the extension observed the request").containsKey("gen_ai.request.model");
    AnyValue tenant = attrs.get(LlmlatAttributes.TENANT);
    return tenant == null ? null : tenant.getStringValue();
  }

  private static boolean isServer(Span span) {
    return span.getKind() == Span.SpanKind.SPAN_KIND_SERVER;
  }

  private static String hex(int bytes) {
    byte[] id = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(id);
    return HexFormat.of().formatHex(id);
  }
}
