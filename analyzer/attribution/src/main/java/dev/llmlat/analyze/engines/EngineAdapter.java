package dev.llmlat.analyze.engines;

import dev.llmlat.analyze.SpanRecord;

/**
 * Reads one engine's own tracing convention into {@link EngineRequest}s. An adapter declares which
 * spans are its requests ({@link #requestRule}); {@link EngineAdapters} turns those declarations into
 * the store's filter and the in-memory check.
 */
public interface EngineAdapter {

  /** The convention, as {@code explain} and reports name it ("vLLM V1", "SGLang", ...). */
  String name();

  /** What this engine's spans cannot show, for reports ("" when nothing stands out). */
  default String cannotShow() {
    return "";
  }

  /** Which spans are this convention's requests, and which shared spans their attribution reads. */
  RequestRule requestRule();

  /** The request {@code span} stands for, from its trace and the spans linked to it. */
  EngineRequest read(SpanRecord span, TraceContext context);
}
