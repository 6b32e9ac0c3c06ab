package dev.llmlat.analyze.engines;

import dev.llmlat.analyze.SpanRecord;
import java.util.Set;

/**
 * Reads one engine's own tracing convention into {@link EngineRequest}s. An adapter picks itself
 * from a span's name, instrumentation scope and service; {@link EngineAdapters} asks them in turn.
 */
public interface EngineAdapter {

  /** The convention, as {@code explain} and reports name it ("vLLM V1", "SGLang", ...). */
  String name();

  /** What this engine's spans cannot show, for reports ("" when nothing stands out). */
  default String cannotShow() {
    return "";
  }

  /**
   * An SQL condition over {@code otel_traces} that holds for this convention's request spans (the
   * analyzer finds requests by it in the store); built from constants only, never from input.
   */
  String requestWhere();

  /**
   * The part of {@link #requestWhere} on {@code SpanName} alone: a cheap first filter (a
   * LowCardinality column) before the attribute maps are read.
   */
  String requestNameWhere();

  /**
   * Names of spans outside a request's own trace that its attribution needs (engine steps, batch
   * spans in traces of their own); read for the time around a request.
   */
  default Set<String> sharedSpanNames() {
    return Set.of();
  }

  /** Whether {@code span} is a request written by this convention. */
  boolean isRequest(SpanRecord span);

  /** The request {@code span} stands for, from its trace and the spans linked to it. */
  EngineRequest read(SpanRecord span, TraceContext context);
}
