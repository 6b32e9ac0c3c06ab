package dev.llmlat.load;

/** The OpenAI-compatible streaming APIs the load generator speaks. */
public enum Endpoint {
  /**
   * {@code /v1/chat/completions}: one user message; content in {@code choices[0].delta.content}.
   */
  CHAT("/v1/chat/completions", "chat", "openai-chat"),
  /** {@code /v1/completions}: a prompt; content in {@code choices[0].text}. */
  COMPLETIONS("/v1/completions", "text_completion", "openai");

  private final String path;
  private final String operation;
  private final String vllmBackend;

  Endpoint(String path, String operation, String vllmBackend) {
    this.path = path;
    this.operation = operation;
    this.vllmBackend = vllmBackend;
  }

  /** The path under the server's root. */
  public String path() {
    return path;
  }

  /** {@code gen_ai.operation.name} of the request (OpenTelemetry GenAI conventions). */
  public String operation() {
    return operation;
  }

  /** What vLLM's benchmark calls this API ({@code --backend}), for the result file. */
  public String vllmBackend() {
    return vllmBackend;
  }
}
