package dev.llmlat.attribution.engines;

/**
 * The {@code gen_ai.latency.*} attribute names vLLM introduced and TensorRT-LLM and SGLang reuse:
 * seconds as doubles, each a difference of the engine's own timestamps. What each difference spans
 * differs per engine; the adapters say.
 */
final class GenAiLatency {
  static final String TTFT = "gen_ai.latency.time_to_first_token";
  static final String QUEUE = "gen_ai.latency.time_in_queue";
  static final String PREFILL = "gen_ai.latency.time_in_model_prefill";
  static final String E2E = "gen_ai.latency.e2e";

  private GenAiLatency() {}
}
