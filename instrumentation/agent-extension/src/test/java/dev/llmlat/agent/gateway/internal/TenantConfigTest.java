package dev.llmlat.agent.gateway.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class TenantConfigTest {
  private static final String KEY = "sk-proj-TESTKEY0123456789abcdef";

  /** The first 16 hex characters of SHA-256(KEY), computed with sha256sum. */
  private static final String KEY_HASH = "key-6d7c0d59d0b4e33b";

  /** Request headers as the server stacks look them up: by name, any case. */
  private static Function<String, String> headers(String... namesAndValues) {
    Map<String, String> map = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    for (int i = 0; i < namesAndValues.length; i += 2) {
      map.put(namesAndValues[i], namesAndValues[i + 1]);
    }
    return map::get;
  }

  private static final Function<String, String> ALL_SOURCES =
      headers("X-Tenant-Id", "acme", "Authorization", "Bearer " + KEY, "api-key", KEY);

  @Test
  void offByDefaultRecordsNothingAndSaysNothing() {
    for (String unset : new String[] {null, "", "  "}) {
      TenantConfig config = TenantConfig.parse(unset, "x-org");
      assertThat(config.source()).isEqualTo(TenantConfig.Source.OFF);
      assertThat(config.problem()).isNull();
      assertThat(config.description()).isNull();
      assertThat(config.fromUserField()).isFalse();
      assertThat(config.fromHeaders(ALL_SOURCES)).isNull();
    }
  }

  @Test
  void headerSourceReadsTheDefaultOrConfiguredHeaderTrimmedAndCut() {
    TenantConfig byDefault = TenantConfig.parse("header", null);
    assertThat(byDefault.header()).isEqualTo("x-tenant-id");
    assertThat(byDefault.fromHeaders(headers("X-TENANT-ID", "  acme  "))).isEqualTo("acme");
    assertThat(byDefault.fromHeaders(headers("x-tenant-id", "t".repeat(200))))
        .isEqualTo("t".repeat(128));
    assertThat(byDefault.fromHeaders(headers("x-tenant-id", "   "))).isNull();
    assertThat(byDefault.fromHeaders(headers("x-org", "acme"))).isNull();
    assertThat(byDefault.fromUserField()).isFalse();

    TenantConfig custom = TenantConfig.parse(" HEADER ", "X-Org");
    assertThat(custom.header()).isEqualTo("x-org");
    assertThat(custom.fromHeaders(headers("x-tenant-id", "acme", "X-ORG", "globex")))
        .isEqualTo("globex");
    assertThat(custom.description()).contains("llmlat.tenant").contains("x-org");
  }

  @Test
  void aCutNeverSplitsASurrogatePair() {
    String value = "a".repeat(127) + "\uD83D\uDE00" + "b";
    assertThat(TenantConfig.bounded(value)).isEqualTo("a".repeat(127));
  }

  @Test
  void apiKeyHashIsAStableDigestThatNeverShowsTheKey() {
    TenantConfig config = TenantConfig.parse("api-key-hash", null);
    String tenant = config.fromHeaders(headers("Authorization", "Bearer " + KEY));
    assertThat(tenant).isEqualTo(KEY_HASH);
    assertThat(config.fromHeaders(headers("authorization", "  bearer   " + KEY + " ")))
        .isEqualTo(KEY_HASH);
    // Azure OpenAI's header; d9efff76... is SHA-256("azure-key-42")
    assertThat(config.fromHeaders(headers("api-key", "azure-key-42")))
        .isEqualTo("key-d9efff76407915f8");
    for (int i = 0; i + 4 <= KEY.length(); i++) {
      assertThat(tenant).as("no 4 characters of the key").doesNotContain(KEY.substring(i, i + 4));
    }
    assertThat(config.fromHeaders(headers("Authorization", "Basic dXNlcjpwYXNz"))).isNull();
    assertThat(config.fromHeaders(headers("Authorization", "Bearer "))).isNull();
    assertThat(config.fromHeaders(headers("x-tenant-id", "acme"))).isNull();
    assertThat(config.description()).contains("hash").doesNotContain(KEY);
  }

  @Test
  void userSourceIsLeftToTheBodyScanner() {
    TenantConfig config = TenantConfig.parse("user", "x-org");
    assertThat(config.fromUserField()).isTrue();
    assertThat(config.fromHeaders(ALL_SOURCES)).isNull();
  }

  @Test
  void aBadValueIsNamedAndTurnsTheFeatureOff() {
    TenantConfig badSource = TenantConfig.parse("tenant-header", null);
    assertThat(badSource.source()).isEqualTo(TenantConfig.Source.OFF);
    assertThat(badSource.fromHeaders(ALL_SOURCES)).isNull();
    assertThat(badSource.problem())
        .contains("otel.instrumentation.llmlat.tenant.source=\"tenant-header\"")
        .contains("header, user, api-key-hash")
        .contains("no tenant is recorded");

    TenantConfig badHeader = TenantConfig.parse("header", "x tenant");
    assertThat(badHeader.source()).isEqualTo(TenantConfig.Source.OFF);
    assertThat(badHeader.fromHeaders(headers("x tenant", "acme"))).isNull();
    assertThat(badHeader.problem())
        .contains("otel.instrumentation.llmlat.tenant.header=\"x tenant\"")
        .contains("not an HTTP header name");
  }
}
