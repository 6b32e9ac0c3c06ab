package dev.llmlat.agent.gateway.internal;

import java.util.Locale;

/**
 * Whether prompts and completions are recorded on gateway spans: off unless the user opts in with
 * the OpenTelemetry GenAI setting {@code otel.instrumentation.genai.capture-message-content=true}
 * (env {@code OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT}). Each captured text is cut at
 * {@code otel.instrumentation.genai.message-content.max-length} characters (default 8192, env
 * {@code OTEL_INSTRUMENTATION_GENAI_MESSAGE_CONTENT_MAX_LENGTH}) and marked as truncated.
 */
public final class ContentCapture {
  public static final String PROPERTY = "otel.instrumentation.genai.capture-message-content";
  public static final String MAX_LENGTH_PROPERTY =
      "otel.instrumentation.genai.message-content.max-length";
  static final int DEFAULT_MAX_LENGTH = 8192;

  private static final boolean ENABLED = "true".equalsIgnoreCase(setting(PROPERTY));
  private static final int MAX_LENGTH = maxLength(setting(MAX_LENGTH_PROPERTY));

  private ContentCapture() {}

  public static boolean enabled() {
    return ENABLED;
  }

  /** The most characters kept of one prompt or completion. */
  public static int maxLength() {
    return MAX_LENGTH;
  }

  /** {@code text} cut to {@code maxChars} characters with a marker saying how long it was. */
  static String bounded(String text, long totalChars, int maxChars) {
    if (totalChars <= maxChars && text.length() <= maxChars) {
      return text;
    }
    return text.substring(0, Math.min(text.length(), maxChars))
        + "...[truncated: "
        + totalChars
        + " chars]";
  }

  /** A system property, else the environment variable named the OpenTelemetry way. */
  static String setting(String property) {
    String value = System.getProperty(property);
    if (value == null) {
      value = System.getenv(property.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_'));
    }
    return value == null ? null : value.trim();
  }

  static int maxLength(String value) {
    if (value == null || value.isEmpty()) {
      return DEFAULT_MAX_LENGTH;
    }
    try {
      int n = Integer.parseInt(value);
      return n > 0 ? n : DEFAULT_MAX_LENGTH;
    } catch (NumberFormatException e) {
      return DEFAULT_MAX_LENGTH; // the start-up warning names the value in use
    }
  }
}
