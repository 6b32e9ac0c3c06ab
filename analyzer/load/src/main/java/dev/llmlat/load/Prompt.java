package dev.llmlat.load;

/**
 * One request's input: the prompt text (sent, never recorded on a span), its length in tokens as
 * far as the client can tell without the server's tokenizer, and the output tokens to ask for.
 *
 * @param text the prompt
 * @param inputTokens the prompt's estimated tokens (the server's {@code usage.prompt_tokens}
 *     replaces it when sent)
 * @param outputTokens {@code max_tokens} of the request
 */
public record Prompt(String text, int inputTokens, int outputTokens) {
  public Prompt {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("a prompt has text");
    }
    if (inputTokens < 0 || outputTokens < 1) {
      throw new IllegalArgumentException(
          "a prompt asks for at least 1 output token, got " + outputTokens);
    }
  }

  /**
   * Tokens of a text without the model's tokenizer: a quarter of its characters, OpenAI's rule of
   * thumb for English. Only shown where the server reports no usage.
   */
  static int estimateTokens(String text) {
    return Math.max(1, (text.length() + 3) / 4);
  }
}
