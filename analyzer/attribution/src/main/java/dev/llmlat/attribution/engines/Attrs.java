package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;

/** Attribute reading shared by the adapters. */
final class Attrs {
  private Attrs() {}

  /** The first non-empty value among {@code keys}, or "". */
  static String first(SpanRecord s, String... keys) {
    for (String k : keys) {
      String v = s.attr(k);
      if (!v.isEmpty()) {
        return v;
      }
    }
    return "";
  }

  /** A duration in seconds (a double attribute) as ns, or -1 when absent or not a number. */
  static long seconds(SpanRecord s, String key) {
    double v = s.doubleAttr(key, Double.NaN);
    return Double.isNaN(v) || v < 0 || Double.isInfinite(v) ? -1 : Math.round(v * 1e9);
  }

  /**
   * A builder with what the {@code gen_ai.*} request attributes say: model, request id, finish
   * reasons, and token counts ({@code input/output_tokens}, else the older {@code
   * prompt/completion_tokens}).
   */
  static EngineRequest.Builder genAiRequest(String adapter, SpanRecord e) {
    return EngineRequest.builder(adapter, e)
        .model(first(e, "gen_ai.response.model", "gen_ai.request.model"))
        .requestId(e.attr("gen_ai.request.id"))
        .finishReason(e.attr("gen_ai.response.finish_reasons"))
        .tokens(
            e.longAttr("gen_ai.usage.input_tokens", e.longAttr("gen_ai.usage.prompt_tokens", 0)),
            e.longAttr(
                "gen_ai.usage.output_tokens", e.longAttr("gen_ai.usage.completion_tokens", 0)));
  }
}
