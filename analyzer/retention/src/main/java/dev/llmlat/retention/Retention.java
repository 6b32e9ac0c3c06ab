package dev.llmlat.retention;

import dev.llmlat.store.ClickHouseStore;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Retention decided by attribution, as the Collector's tail sampling decides but on TTFT and after
 * the fact: for the requests older than the policy's age, record in {@code llmlat_kept_traces}
 * which traces are kept and why, then delete every other span and kernel of those requests from
 * {@code otel_traces}, {@code gpu_kernels} and {@code gpu_collectives} ({@code
 * llm_request_attribution} keeps every row). A trace whose spans serve a kept or not yet decided
 * request (the step spans of a batch live in the trace of its first request; they link to every
 * request they served) is kept too, until nothing more is needed. Each request is decided once,
 * while its spans are there, and the deletes are mutations that wait for the engine: running it
 * again decides and deletes nothing more. Kernels no step claimed, older than the age, go too (no
 * request needs them).
 */
public final class Retention {
  /** Why a trace is kept ({@code llmlat_kept_traces.Reason}). */
  public static final String SLO = "slo";

  public static final String FAILED = "failed";
  public static final String SLOWEST = "slowest";
  public static final String SAMPLE = "sample";
  public static final String SERVES = "serves";

  private static final int MAX_ROUNDS = 16;
  private static final String SAMPLE_SCALE = "1000000";

  /**
   * What one run did: traces decided, kept by reason, deleted; spans, kernels and stored bytes
   * before and after.
   */
  public record Outcome(
      long decided,
      Map<String, Long> keptByReason,
      long deletedTraces,
      long spansBefore,
      long spansAfter,
      long kernelsBefore,
      long kernelsAfter,
      long bytesBefore,
      long bytesAfter,
      long requests) {}

  private Retention() {}

  /** Applies {@code policy} at {@code nowNs} (Unix ns). */
  public static Outcome apply(ClickHouseStore store, RetentionPolicy policy, long nowNs) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("cutoff", nowNs - policy.olderThan().toNanos());
    p.put("slo", policy.sloTtftNs());
    p.put("slowest", policy.keepSlowest() > 0 ? 1 : 0);
    p.put("slow_q", 1 - policy.keepSlowest());
    p.put("rate", Math.round(policy.keepRate() * Long.parseLong(SAMPLE_SCALE)));
    long spansBefore = count(store, "SELECT count() FROM otel_traces", p);
    long kernelsBefore = count(store, "SELECT count() FROM gpu_kernels", p);
    long bytesBefore = bytes(store);
    // requests old enough, not decided yet, whose spans are still here
    String undecided =
        "SELECT TraceId FROM llm_request_attribution FINAL WHERE ArrivalTime < fromUnixTimestamp64Nano({cutoff:Int64})"
            + " AND TraceId NOT IN (SELECT TraceId FROM llmlat_kept_traces) AND TraceId IN (SELECT TraceId FROM otel_traces_trace_id_ts)";
    long decided = count(store, "SELECT count() FROM (" + undecided + ")", p);
    store.query(
        "INSERT INTO llmlat_kept_traces (TraceId, Reason, DecidedAt) SELECT TraceId, reason, now64(6) FROM ("
            + " SELECT a.TraceId AS TraceId, multiIf(a.TtftNs > {slo:Int64}, '"
            + SLO
            + "',"
            + " a.TraceId IN (SELECT TraceId FROM otel_traces WHERE StatusCode = 'Error'), '"
            + FAILED
            + "',"
            + " {slowest:UInt8} = 1 AND a.TtftNs >= q.threshold, '"
            + SLOWEST
            + "',"
            + " cityHash64(a.TraceId) % "
            + SAMPLE_SCALE
            + " < {rate:UInt64}, '"
            + SAMPLE
            + "', '') AS reason"
            + " FROM (SELECT TraceId, Model, TtftNs FROM llm_request_attribution FINAL WHERE TraceId IN ("
            + undecided
            + ")) AS a"
            + " INNER JOIN (SELECT Model, quantileExactInclusive({slow_q:Float64})(TtftNs) AS threshold FROM llm_request_attribution FINAL"
            + " GROUP BY Model) AS q ON a.Model = q.Model) WHERE reason != ''",
        p);
    // the traces to delete: old requests nobody kept
    String doomed =
        "SELECT TraceId FROM llm_request_attribution FINAL WHERE ArrivalTime < fromUnixTimestamp64Nano({cutoff:Int64})"
            + " AND TraceId NOT IN (SELECT TraceId FROM llmlat_kept_traces)";
    for (int round = 0; round < MAX_ROUNDS; round++) {
      long kept = count(store, "SELECT count() FROM llmlat_kept_traces FINAL", p);
      store.query(
          "INSERT INTO llmlat_kept_traces (TraceId, Reason, DecidedAt) SELECT DISTINCT TraceId, '"
              + SERVES
              + "', now64(6)"
              + " FROM otel_traces ARRAY JOIN arrayConcat(Links.TraceId, JSONExtract(SpanAttributes['llmlat.trace_ids'], 'Array(String)'))"
              + " AS served WHERE TraceId IN ("
              + doomed
              + ") AND served != TraceId AND served NOT IN ("
              + doomed
              + ")",
          p);
      if (count(store, "SELECT count() FROM llmlat_kept_traces FINAL", p) == kept) {
        break;
      }
    }
    long deleted =
        count(
            store,
            "SELECT count() FROM ("
                + doomed
                + ") WHERE TraceId IN (SELECT TraceId FROM otel_traces_trace_id_ts)",
            p);
    String wait = " SETTINGS mutations_sync = 2";
    // kernels first: they are found through the step spans about to go
    store.query(
        "ALTER TABLE gpu_kernels DELETE WHERE StepSpanId IN (SELECT SpanId FROM otel_traces WHERE TraceId IN ("
            + doomed
            + ")) OR (StepSpanId = '' AND Start < fromUnixTimestamp64Nano({cutoff:Int64}))"
            + wait,
        p);
    store.query(
        "ALTER TABLE gpu_collectives DELETE WHERE StepSpanId IN (SELECT SpanId FROM otel_traces WHERE TraceId IN ("
            + doomed
            + "))"
            + wait,
        p);
    store.query("ALTER TABLE otel_traces DELETE WHERE TraceId IN (" + doomed + ")" + wait, p);
    store.query(
        "ALTER TABLE otel_traces_trace_id_ts DELETE WHERE TraceId IN (" + doomed + ")" + wait, p);
    Map<String, Long> byReason = new LinkedHashMap<>();
    for (List<String> r :
        store
            .query(
                "SELECT Reason, count() FROM llmlat_kept_traces FINAL GROUP BY Reason ORDER BY Reason",
                p)
            .rows()) {
      byReason.put(r.get(0), Long.parseLong(r.get(1)));
    }
    long requests = count(store, "SELECT count() FROM llm_request_attribution FINAL", p);
    return new Outcome(
        decided,
        byReason,
        deleted,
        spansBefore,
        count(store, "SELECT count() FROM otel_traces", p),
        kernelsBefore,
        count(store, "SELECT count() FROM gpu_kernels", p),
        bytesBefore,
        bytes(store),
        requests);
  }

  private static long count(ClickHouseStore store, String sql, Map<String, Object> params) {
    return Long.parseLong(store.query(sql, params).rows().get(0).get(0));
  }

  /** Bytes the spans, kernels and trace index take on disk. */
  public static long bytes(ClickHouseStore store) {
    return Long.parseLong(
        store
            .query(
                "SELECT sum(bytes_on_disk) FROM system.parts WHERE active AND database = currentDatabase()"
                    + " AND table IN ('otel_traces', 'gpu_kernels', 'gpu_collectives', 'otel_traces_trace_id_ts')")
            .rows()
            .get(0)
            .get(0));
  }
}
