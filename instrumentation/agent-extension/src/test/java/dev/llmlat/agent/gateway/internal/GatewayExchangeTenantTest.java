package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpans;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tenant on the SERVER span, per source, for one request that carries all three: a tenant
 * header, a {@code user} field and an API key. Off (this JVM's setting: none) nothing is recorded.
 */
class GatewayExchangeTenantTest {
  private static final String KEY = "sk-tenant-a";

  /** The first 16 hex characters of SHA-256("sk-tenant-a"), computed with sha256sum. */
  private static final String KEY_HASH = "key-43b53901e1469bd7";

  private static final byte[] BODY =
      ("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
              + "\"stream\":true,\"max_tokens\":8,\"user\":\"end-user-7\"}")
          .getBytes(StandardCharsets.UTF_8);

  private final SdkTracerProvider tracing = SdkTracerProvider.builder().build();

  @AfterEach
  void close() {
    tracing.close();
  }

  private static Function<String, String> headers() {
    Map<String, String> map = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    map.put("X-Tenant-Id", " acme ");
    map.put("Authorization", "Bearer " + KEY);
    return map::get;
  }

  /** The request's SERVER span after the exchange read its body in two pieces inside it. */
  private SpanData serve(TenantConfig tenants) {
    Span span = tracing.get("t").spanBuilder("POST").setSpanKind(SpanKind.SERVER).startSpan();
    try (Scope ignored = LocalRootSpans.store(Context.root().with(span), span).makeCurrent()) {
      GatewayExchange exchange =
          new GatewayExchange(OpenAiEndpoint.CHAT_COMPLETIONS, headers(), tenants, false);
      exchange.onRequestBytes(BODY, 0, 30);
      exchange.onRequestBytes(BODY, 30, BODY.length - 30);
    }
    span.end();
    return ((ReadableSpan) span).toSpanData();
  }

  @Test
  void eachSourceRecordsItsTenant() {
    assertThat(
            serve(TenantConfig.parse("header", null)).getAttributes().get(GatewayExchange.TENANT))
        .isEqualTo("acme");
    assertThat(serve(TenantConfig.parse("user", null)).getAttributes().get(GatewayExchange.TENANT))
        .isEqualTo("end-user-7");
    SpanData hashed = serve(TenantConfig.parse("api-key-hash", null));
    assertThat(hashed.getAttributes().get(GatewayExchange.TENANT)).isEqualTo(KEY_HASH);
    assertThat(hashed.getAttributes().asMap().values()).noneMatch(v -> v.toString().contains(KEY));
  }

  @Test
  void offByDefaultAndOnABadValueNothingIsRecorded() {
    assertThat(TenantConfig.current().source())
        .as("no setting in this JVM")
        .isEqualTo(TenantConfig.Source.OFF);
    for (TenantConfig off :
        new TenantConfig[] {TenantConfig.current(), TenantConfig.parse("tenant", null)}) {
      SpanData data = serve(off);
      assertThat(data.getAttributes().get(GatewayExchange.MODEL))
          .as("the body was read")
          .isEqualTo("m");
      assertThat(data.getAttributes().get(GatewayExchange.TENANT)).isNull();
    }
  }
}
