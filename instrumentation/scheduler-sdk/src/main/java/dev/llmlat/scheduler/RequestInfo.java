package dev.llmlat.scheduler;

/**
 * What the engine knows about a request when it admits it.
 *
 * @param requestId the engine's request id ({@code gen_ai.request.id})
 * @param model the model served ({@code gen_ai.request.model})
 * @param operation the GenAI operation, e.g. {@code chat} or {@code text_completion}
 * @param promptTokens prompt length in tokens
 * @param maxTokens output token limit
 */
public record RequestInfo(
    String requestId, String model, String operation, int promptTokens, int maxTokens) {
  public RequestInfo {
    if (requestId == null || requestId.isEmpty()) {
      throw new IllegalArgumentException("request id is required");
    }
    if (model == null || model.isEmpty()) {
      throw new IllegalArgumentException("model is required");
    }
    if (operation == null || operation.isEmpty()) {
      throw new IllegalArgumentException("operation is required");
    }
    if (promptTokens < 1) {
      throw new IllegalArgumentException("a prompt has at least one token, got " + promptTokens);
    }
    if (maxTokens < 1) {
      throw new IllegalArgumentException("max tokens must be at least 1, got " + maxTokens);
    }
  }

  /** A chat request. */
  public static RequestInfo chat(String requestId, String model, int promptTokens, int maxTokens) {
    return new RequestInfo(requestId, model, "chat", promptTokens, maxTokens);
  }
}
