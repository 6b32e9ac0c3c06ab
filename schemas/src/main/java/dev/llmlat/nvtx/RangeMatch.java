package dev.llmlat.nvtx;

import java.util.List;

/**
 * What a range's text says about the engine step it brackets.
 *
 * @param kind {@code prefill | decode | mixed}, or {@code null} when the format does not say
 * @param stepSpanId the engine step span id (16 lowercase hex), or {@code null} when the text does not name it
 * @param traceIds the request trace ids served (32 lowercase hex each), in the order written, never empty
 */
public record RangeMatch(String kind, String stepSpanId, List<String> traceIds) {
  public RangeMatch {
    traceIds = List.copyOf(traceIds);
    if (traceIds.isEmpty()) {
      throw new IllegalArgumentException("a step serves at least one trace");
    }
  }
}
