package dev.llmlat.report;

/**
 * Inter-token stall causes grouped by kind: a cause names its request, tokens or times ("stalled by
 * prefill of request 4bf9… (812 tokens)", "slow step (41.2 ms)", "the gateway could not write to
 * its client (the client read slowly), 35.0 ms"), and may add what could not be seen after "; "
 * (the gateway's blocks beyond those it recorded), which would make every cause its own group.
 */
public final class StallCauses {
  /** The cause without what follows its first "; ". */
  private static final String CAUSE = "splitByString('; ', TopStallCause)[1]";

  /**
   * The kind of {@code TopStallCause}, as an SQL expression over {@code llm_request_attribution}.
   */
  public static final String KIND_SQL =
      "multiIf(startsWith(TopStallCause, 'stalled by prefill'), 'stalled by another request''s prefill',"
          + " startsWith(TopStallCause, 'slow step'), 'slow step', startsWith(TopStallCause, 'batch grew'), 'batch grew',"
          + " startsWith(TopStallCause, 'the gateway could not write to its client'), 'the gateway could not write to its client (slow reader)',"
          + " TopStallCause = '', '', "
          + CAUSE
          + ")";

  private StallCauses() {}
}
