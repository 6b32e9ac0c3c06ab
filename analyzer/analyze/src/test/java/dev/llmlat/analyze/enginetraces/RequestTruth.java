package dev.llmlat.analyze.enginetraces;

import java.util.List;

/**
 * What really happened to one request inside an engine: the truth an engine's trace writer turns
 * into that engine's own spans, and the figures tests compare the analyzer's attribution with. All
 * times are Unix nanoseconds on the engine's clock.
 *
 * @param traceId 32 lowercase hex digits (the W3C trace id the gateway sent in {@code traceparent})
 * @param parentSpanId the span id the engine received in {@code traceparent} (the gateway's CLIENT
 *     span), or ""
 * @param receivedNs the engine's HTTP server received the request (before templating and
 *     tokenization)
 * @param arrivalNs the engine's scheduler got the tokenized request (vLLM's {@code arrival_time} is
 *     stamped here)
 * @param scheduledNs the request left the waiting queue (first scheduled)
 * @param prefillChunks the prefill forward passes that processed this request's prompt, in order
 * @param firstTokenNs the first output token was sampled
 * @param tokenNs every output token's time, first token included ({@code tokenNs[0] ==
 *     firstTokenNs})
 * @param finishNs the request finished (last token, response complete)
 * @param kvTransferNs KV-cache transfer time (disaggregated serving; 0 when none), inside [arrival,
 *     scheduled]
 */
public record RequestTruth(
    String traceId,
    String parentSpanId,
    String requestId,
    String model,
    int promptTokens,
    int outputTokens,
    long receivedNs,
    long arrivalNs,
    long scheduledNs,
    List<Chunk> prefillChunks,
    long firstTokenNs,
    long[] tokenNs,
    long finishNs,
    String finishReason,
    long kvTransferNs) {

  /**
   * One prefill forward pass: when it ran and how many of this request's prompt tokens it
   * processed.
   */
  public record Chunk(long startNs, long endNs, int tokens) {}

  /** Queue time: arrival to first scheduled. */
  public long queueNs() {
    return scheduledNs - arrivalNs;
  }

  /** Prefill time: first scheduled to the end of the last prefill chunk. */
  public long prefillNs() {
    return prefillChunks.get(prefillChunks.size() - 1).endNs() - scheduledNs;
  }

  /** The end of the last prefill chunk. */
  public long prefillEndNs() {
    return prefillChunks.get(prefillChunks.size() - 1).endNs();
  }

  /** Decode time: first token to finish. */
  public long decodeNs() {
    return finishNs - firstTokenNs;
  }
}
