package dev.llmlat.engine;

import dev.llmlat.scheduler.RequestTrace;

/**
 * The scheduler's state of one request. Fields other than {@link #cancelled} belong to the
 * scheduler thread.
 */
final class EngineRequest {
  final RequestTrace trace;
  final int maxTokens;
  final TokenStream stream = new TokenStream();

  /** Tokens whose KV the cache holds now (0 after a preemption). */
  int kvTokens;

  /** Tokens handed to {@link #stream} so far. */
  int delivered;

  volatile boolean cancelled;

  EngineRequest(RequestTrace trace) {
    this.trace = trace;
    this.maxTokens = trace.info().maxTokens();
  }

  /** Prefill complete and at least one token out: the request can take a decode slot. */
  boolean decodable() {
    return trace.isPrefillDone() && trace.generatedTokens() > 0 && !trace.isEnded();
  }

  String id() {
    return trace.info().requestId();
  }
}
