package dev.llmlat.bench;

import dev.llmlat.store.EmbeddedClickHouse;

/**
 * A digest of the rows in {@code llm_request_attribution} (every column but {@code AnalyzedAt},
 * which is the time of the run): equal digests before and after a change to the analyzer mean it
 * wrote the same rows. Read with FINAL (re-runs replace rows; which copy is kept does not matter,
 * they differ only in that column); a sum of row hashes, so row order does not matter.
 */
final class AttributionRowsHash {
  private AttributionRowsHash() {}

  /** {@code N rows, hash H} over the rows whose arrival lies in [fromNs, toNs]. */
  static String of(EmbeddedClickHouse store, long fromNs, long toNs) {
    return store
        .query(
            "SELECT concat(toString(count()), ' rows, hash ', lower(hex(sum(cityHash64(*)))))"
                + " FROM (SELECT * EXCEPT (AnalyzedAt) FROM llm_request_attribution FINAL"
                + " WHERE ArrivalTime >= fromUnixTimestamp64Nano("
                + fromNs
                + ") AND ArrivalTime <= fromUnixTimestamp64Nano("
                + toNs
                + "))")
        .single();
  }
}
