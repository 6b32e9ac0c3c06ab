package dev.llmlat.analyze;

import dev.llmlat.semconv.LlmlatAttributes;

/** Span and layer names the analyzer keys on (the instrumentation's contract). */
final class LayerNames {
  static final String GATEWAY = LlmlatAttributes.LAYER_GATEWAY;
  static final String ENGINE = LlmlatAttributes.LAYER_ENGINE;
  static final String GPU = LlmlatAttributes.LAYER_GPU;
  static final String REQUEST = "llm_request";
  static final String QUEUE = "queue";
  static final String PREFILL = "prefill";
  static final String DECODE = "decode";
  static final String STEP = "step";
  static final String EVENT_FIRST_TOKEN = "llmlat.first_token";
  static final String EVENT_PREEMPTED = "llmlat.preempted";
  static final String DECODE_DELTAS = "llmlat.decode.token_deltas_ns";
  static final String PREFILL_TOKENS = "llmlat.prefill.tokens";

  private LayerNames() {}
}
