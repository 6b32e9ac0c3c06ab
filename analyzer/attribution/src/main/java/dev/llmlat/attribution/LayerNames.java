package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;

/**
 * Layer and step names the analyzer keys on (the instrumentation's contract; engine conventions
 * live in their adapters).
 */
final class LayerNames {
  static final String CLIENT = LlmlatAttributes.LAYER_CLIENT;
  static final String GATEWAY = LlmlatAttributes.LAYER_GATEWAY;
  static final String ENGINE = LlmlatAttributes.LAYER_ENGINE;
  static final String GPU = LlmlatAttributes.LAYER_GPU;
  static final String STEP = dev.llmlat.semconv.LlmlatSpanNames.STEP;

  private LayerNames() {}
}
