package dev.llmlat.attribution.engines;

import dev.llmlat.attribution.SpanRecord;
import java.util.List;

/**
 * What an adapter may look at around a request span: its trace, and spans elsewhere that link to
 * it.
 */
public interface TraceContext {

  /** Every span of the trace. */
  List<SpanRecord> trace();

  /**
   * Spans in other traces (batches, steps) whose links name {@code span}, or its trace when the
   * link names no span.
   */
  List<SpanRecord> linking(SpanRecord span);

  /** The spans of the trace whose parent is {@code span}. */
  default List<SpanRecord> children(SpanRecord span) {
    return trace().stream().filter(s -> s.parentSpanId().equals(span.spanId())).toList();
  }

  /** The span of the trace with this id, or null. */
  default SpanRecord find(String spanId) {
    for (SpanRecord s : trace()) {
      if (s.spanId().equals(spanId)) {
        return s;
      }
    }
    return null;
  }
}
