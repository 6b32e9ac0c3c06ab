package dev.llmlat.report;

import dev.llmlat.attribution.GatewayBlockCause;

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
          + gatewayKinds()
          + " TopStallCause = '', '', "
          + CAUSE
          + ")";

  /**
   * The gateway's blocks by what was full, those of an unknown cause (or none) last: each cause's
   * text starts with the unknown one's prefix.
   */
  private static String gatewayKinds() {
    StringBuilder sql = new StringBuilder();
    for (GatewayBlockCause c : GatewayBlockCause.values()) {
      if (c != GatewayBlockCause.UNKNOWN) {
        sql.append(arm(c.text(), c.kind()));
      }
    }
    return sql.append(arm(GatewayBlockCause.PREFIX, GatewayBlockCause.UNKNOWN.kind())).toString();
  }

  private static String arm(String prefix, String kind) {
    return " startsWith(TopStallCause, '" + quote(prefix) + "'), '" + quote(kind) + "',";
  }

  private static String quote(String text) {
    return text.replace("\\", "\\\\").replace("'", "''");
  }

  private StallCauses() {}
}
