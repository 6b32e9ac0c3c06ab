package dev.llmlat.report;

/**
 * Inter-token stall causes grouped by kind: a cause names its request, tokens or step time
 * ("stalled by prefill of request 4bf9… (812 tokens)", "slow step (41.2 ms)"), which would make
 * every cause its own group.
 */
public final class StallCauses {
  /** The kind of {@code TopStallCause}, as an SQL expression over {@code llm_request_attribution}. */
  public static final String KIND_SQL = "multiIf(startsWith(TopStallCause, 'stalled by prefill'), 'stalled by another request''s prefill',"
      + " startsWith(TopStallCause, 'slow step'), 'slow step', startsWith(TopStallCause, 'batch grew'), 'batch grew',"
      + " TopStallCause)";

  private StallCauses() {}
}
