package dev.llmlat.agent.gateway.internal;

import dev.llmlat.semconv.LlmlatAttributes;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.function.Function;

/**
 * Where the tenant of a gateway request comes from, if anywhere: off unless the user sets {@code
 * otel.instrumentation.llmlat.tenant.source} (env {@code
 * OTEL_INSTRUMENTATION_LLMLAT_TENANT_SOURCE}) to {@code header} (the value of {@code
 * otel.instrumentation.llmlat.tenant.header}, default {@code x-tenant-id}), {@code user} (the
 * OpenAI request body's {@code user} field) or {@code api-key-hash} (a SHA-256 digest of the API
 * key, never the key). A tenant is a label, not a secret: values are trimmed and cut at {@value
 * #MAX_LENGTH} characters. A bad setting turns the feature off; {@link #problem()} says why (logged
 * once at agent start).
 *
 * @param source where the tenant is read from ({@link Source#OFF}: nowhere)
 * @param header the header read for {@link Source#HEADER}, lower case
 * @param problem why a set value was refused, else null
 */
public record TenantConfig(Source source, String header, String problem) {
  public static final String SOURCE_PROPERTY = "otel.instrumentation.llmlat.tenant.source";
  public static final String HEADER_PROPERTY = "otel.instrumentation.llmlat.tenant.header";
  static final String DEFAULT_HEADER = "x-tenant-id";
  static final int MAX_LENGTH = 128;

  /** Hex characters of the key digest kept: 64 bits, enough to tell a deployment's keys apart. */
  static final int KEY_HASH_HEX = 16;

  static final String KEY_HASH_PREFIX = "key-";
  static final String AUTHORIZATION = "authorization";

  /** Azure OpenAI's key header. */
  static final String API_KEY = "api-key";

  private static final String BEARER = "bearer ";

  private static final TenantConfig CURRENT =
      parse(ContentCapture.setting(SOURCE_PROPERTY), ContentCapture.setting(HEADER_PROPERTY));

  /** The tenant's origin, as {@link #SOURCE_PROPERTY} names it. */
  public enum Source {
    OFF(null),
    HEADER("header"),
    USER("user"),
    API_KEY_HASH("api-key-hash");

    private final String setting;

    Source(String setting) {
      this.setting = setting;
    }

    /** The value of {@link #SOURCE_PROPERTY} that selects it. */
    public String setting() {
      return setting;
    }
  }

  /** The configuration of this JVM, read once. */
  public static TenantConfig current() {
    return CURRENT;
  }

  /** The configuration the two settings (null when unset) describe. */
  static TenantConfig parse(String source, String header) {
    if (source == null || source.isBlank()) {
      return new TenantConfig(Source.OFF, null, null);
    }
    String wanted = source.trim().toLowerCase(Locale.ROOT);
    Source chosen = null;
    for (Source candidate : Source.values()) {
      if (wanted.equals(candidate.setting)) {
        chosen = candidate;
      }
    }
    if (chosen == null) {
      return refused(
          SOURCE_PROPERTY + "=\"" + source + "\" is not one of header, user, api-key-hash");
    }
    if (chosen != Source.HEADER) {
      return new TenantConfig(chosen, null, null);
    }
    String name =
        header == null || header.isBlank()
            ? DEFAULT_HEADER
            : header.trim().toLowerCase(Locale.ROOT);
    if (!isHeaderName(name)) {
      return refused(HEADER_PROPERTY + "=\"" + header + "\" is not an HTTP header name");
    }
    return new TenantConfig(Source.HEADER, name, null);
  }

  private static TenantConfig refused(String why) {
    return new TenantConfig(Source.OFF, null, "llmlat: " + why + ": no tenant is recorded");
  }

  /** True when the request body's {@code user} field is the tenant (the body scanner reads it). */
  public boolean fromUserField() {
    return source == Source.USER;
  }

  /** What is recorded, for the start-up log; null when off. */
  public String description() {
    String from =
        source == Source.HEADER
            ? "the request header " + header
            : source == Source.USER
                ? "the OpenAI request body's user field"
                : source == Source.API_KEY_HASH
                    ? "a SHA-256 hash of the request's API key (never the key)"
                    : null;
    return from == null
        ? null
        : "llmlat: " + LlmlatAttributes.TENANT + " is recorded on gateway spans from " + from;
  }

  /**
   * The tenant the request's headers name, or null (off, the user source, or no such header).
   * {@code headers} gives a header's first value by name (any case), or null.
   */
  public String fromHeaders(Function<String, String> headers) {
    // if, not switch: a switch on the enum would need one more injected helper class (javac's
    // switch map)
    if (source == Source.HEADER) {
      return bounded(headers.apply(header));
    }
    return source == Source.API_KEY_HASH ? keyHash(apiKey(headers)) : null;
  }

  /**
   * The API key: {@code Authorization: Bearer <key>}, else {@code api-key: <key>}; null if none.
   */
  static String apiKey(Function<String, String> headers) {
    String authorization = headers.apply(AUTHORIZATION);
    if (authorization != null) {
      String value = authorization.trim();
      if (value.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
        String key = value.substring(BEARER.length()).trim();
        if (!key.isEmpty()) {
          return key;
        }
      }
    }
    String key = headers.apply(API_KEY);
    return key == null || key.isBlank() ? null : key.trim();
  }

  /**
   * {@code key-} and the first {@value #KEY_HASH_HEX} hex characters of the key's SHA-256; null for
   * null.
   */
  static String keyHash(String key) {
    if (key == null) {
      return null;
    }
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      return KEY_HASH_PREFIX + HexFormat.of().formatHex(digest, 0, KEY_HASH_HEX / 2);
    } catch (NoSuchAlgorithmException e) {
      return null; // every Java runtime has SHA-256
    }
  }

  /**
   * The value trimmed and cut at {@value #MAX_LENGTH} characters (never inside a surrogate pair);
   * null if empty.
   */
  static String bounded(String value) {
    if (value == null) {
      return null;
    }
    String trimmed = value.trim();
    if (trimmed.isEmpty()) {
      return null;
    }
    if (trimmed.length() <= MAX_LENGTH) {
      return trimmed;
    }
    int end =
        Character.isHighSurrogate(trimmed.charAt(MAX_LENGTH - 1)) ? MAX_LENGTH - 1 : MAX_LENGTH;
    return trimmed.substring(0, end);
  }

  /** RFC 9110 token characters. */
  private static boolean isHeaderName(String name) {
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean token =
          (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!token) {
        return false;
      }
    }
    return !name.isEmpty();
  }
}
