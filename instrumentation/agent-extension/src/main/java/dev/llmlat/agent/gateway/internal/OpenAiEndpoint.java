package dev.llmlat.agent.gateway.internal;

/** The OpenAI-compatible endpoints whose SERVER spans get {@code gen_ai.*} attributes. */
public enum OpenAiEndpoint {
  CHAT_COMPLETIONS("chat"),
  COMPLETIONS("text_completion");

  private final String operationName;

  OpenAiEndpoint(String operationName) {
    this.operationName = operationName;
  }

  /** The value of {@code gen_ai.operation.name} (OpenTelemetry GenAI conventions). */
  public String operationName() {
    return operationName;
  }

  /**
   * The endpoint a request path names, or null. Matches the path's end so that gateways mounted
   * under a prefix ({@code /openai/v1/chat/completions}) are recognised too.
   */
  public static OpenAiEndpoint forPath(String path) {
    if (path == null) {
      return null;
    }
    String trimmed = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    if (trimmed.endsWith("/v1/chat/completions")) {
      return CHAT_COMPLETIONS;
    }
    if (trimmed.endsWith("/v1/completions")) {
      return COMPLETIONS;
    }
    return null;
  }
}
