package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;

/**
 * Reads one engine's own tracing convention into {@link EngineRequest}s. An adapter declares which
 * spans are its requests ({@link #requestRule}); {@link EngineAdapters} turns those declarations
 * into the store's filter and the in-memory check.
 */
public interface EngineAdapter {
  /** {@link #role} of the instance that ran the prompt and sent the KV cache. */
  String PREFILL = "prefill";

  /** {@link #role} of the instance that received the KV cache and streams the tokens. */
  String DECODE = "decode";

  /** The convention, as {@code explain} and reports name it ("vLLM V1", "SGLang", ...). */
  String name();

  /** What this engine's spans cannot show, for reports ("" when nothing stands out). */
  default String cannotShow() {
    return "";
  }

  /** Which spans are this convention's requests, and which shared spans their attribution reads. */
  RequestRule requestRule();

  /**
   * The side of a disaggregated request this request span is, as the engine declares it: {@link
   * #PREFILL}, {@link #DECODE}, or "" when it says nothing (a unified server, or an engine that
   * does not tell).
   */
  default String role(SpanRecord request) {
    return "";
  }

  /**
   * What {@link #role} reads, as {@code explain} names the evidence ("kv_transfer_params", ...).
   */
  default String roleEvidence() {
    return name() + "'s request spans";
  }

  /**
   * The engine's own key shared by the prefill and decode halves of one request, "" when none:
   * where the engine breaks the trace (each half its own trace id), the halves are joined by it.
   */
  default String joinKey(SpanRecord request) {
    return "";
  }

  /**
   * The span attribute {@link #joinKey} reads, for looking the other half up in the store ("" when
   * none).
   */
  default String joinKeyAttribute() {
    return "";
  }

  /** The request {@code span} stands for, from its trace and the spans linked to it. */
  EngineRequest read(SpanRecord span, TraceContext context);
}
