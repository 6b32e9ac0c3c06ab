package dev.llmlat.load;

/**
 * What one request measured, as {@link System#nanoTime()} readings (a {@link WallClock} turns them
 * into Unix time for spans): when it was due to be sent (open loop; its start otherwise), sent,
 * when the response headers came, each content chunk (a non-empty text delta), and the end of the
 * response; the token counts the server reported, if any.
 *
 * @param index the request's number in the measured phase, from 0
 * @param traceId 32 hex digits, sent in {@code traceparent}
 * @param spanId 16 hex digits: the client span, the parent the server receives
 * @param estimatedInputTokens the prompt's length as the client estimated it
 * @param maxTokens output tokens asked for
 * @param dueNanos when the schedule wanted it sent
 * @param startNanos when it was sent
 * @param headersNanos when the response headers arrived; -1: never
 * @param chunkNanos arrival of each content chunk, in order
 * @param endNanos when the response ended (or failed)
 * @param httpStatus the response status; 0: none
 * @param usagePromptTokens the server's {@code usage.prompt_tokens}; -1: not sent
 * @param usageCompletionTokens the server's {@code usage.completion_tokens}; -1: not sent
 * @param failure why it failed; null when it succeeded
 */
public record RequestOutcome(
    int index,
    String traceId,
    String spanId,
    int estimatedInputTokens,
    int maxTokens,
    long dueNanos,
    long startNanos,
    long headersNanos,
    long[] chunkNanos,
    long endNanos,
    int httpStatus,
    int usagePromptTokens,
    int usageCompletionTokens,
    Failure failure) {

  public boolean success() {
    return failure == null;
  }

  public boolean cancelled() {
    return failure != null && failure.kind() == Failure.Kind.CANCELLED;
  }

  public int chunks() {
    return chunkNanos.length;
  }

  /** Prompt tokens: the server's count where it sent usage, else the client's estimate. */
  public int inputTokens() {
    return usagePromptTokens >= 0 ? usagePromptTokens : estimatedInputTokens;
  }

  /**
   * Output tokens: the server's count where it sent usage, else the content chunks (one token each,
   * as servers stream them).
   */
  public int outputTokens() {
    return usageCompletionTokens >= 0 ? usageCompletionTokens : chunkNanos.length;
  }

  /** Time to first token: sent to the first content chunk; -1 without one. */
  public long ttftNanos() {
    return chunkNanos.length == 0 ? -1 : chunkNanos[0] - startNanos;
  }

  /**
   * End-to-end latency as vLLM's benchmark measures it: sent to the last content chunk (the usage
   * chunk and {@code [DONE]} carry no token); sent to the end of the response without content.
   */
  public long latencyNanos() {
    return (chunkNanos.length == 0 ? endNanos : chunkNanos[chunkNanos.length - 1]) - startNanos;
  }

  /**
   * Time per output token after the first: {@code (latency - ttft) / (output tokens - 1)}; 0 for
   * one token or none (vLLM's goodput rule).
   */
  public double tpotNanos() {
    int out = outputTokens();
    return out > 1 && chunkNanos.length > 0
        ? (double) (latencyNanos() - ttftNanos()) / (out - 1)
        : 0;
  }

  /** Each content chunk's gap to the one before it (one fewer than the chunks). */
  public long[] chunkDeltasNanos() {
    long[] deltas = new long[Math.max(0, chunkNanos.length - 1)];
    for (int i = 1; i < chunkNanos.length; i++) {
      deltas[i - 1] = chunkNanos[i] - chunkNanos[i - 1];
    }
    return deltas;
  }

  /** Time spent waiting for a free slot under --max-concurrency after it was due. */
  public long queueNanos() {
    return Math.max(0, startNanos - dueNanos);
  }
}
