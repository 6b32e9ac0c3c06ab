package dev.llmlat.cli;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.analyze.store.TraceReader;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.load.LoadResult;
import dev.llmlat.load.RequestOutcome;
import dev.llmlat.load.sweep.ComponentShares;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.ClickHouseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A sweep point's TTFT components from the store: waits (at most {@code wait}) until the engine's
 * spans of the point's requests landed and stopped arriving, attributes those not attributed yet
 * (as {@code llmlat analyze} does: the same rows, idempotent), and sums the point's rows of {@code
 * llm_request_attribution}, tied to the point by trace id.
 */
final class SweepComponents {
  private static final long POLL_MS = 500;

  /** Spans still arriving this recently: the GPU layer's exporter flushes on its own schedule. */
  private static final long QUIET_MS = 1_000;

  /** Around the point's requests: the steps that served them and clock skew between layers. */
  private static final long SLACK_NS = 10_000_000_000L;

  private final ClickHouseStore store;
  private final Duration wait;
  private final BooleanSupplier stopping;
  private String note = "";
  private boolean nothingLanded;

  SweepComponents(ClickHouseStore store, Duration wait, BooleanSupplier stopping) {
    this.store = store;
    this.wait = wait;
    this.stopping = stopping;
  }

  /** Why the last point has no components, or only some requests' ("" when all were attributed). */
  String note() {
    return note;
  }

  /** Whether none of the last point's requests' engine spans reached the store within the wait. */
  boolean nothingLanded() {
    return nothingLanded;
  }

  /**
   * The point's components; null when none of its requests' engine spans reached the store within
   * the wait.
   */
  ComponentShares of(LoadResult result) throws InterruptedException {
    List<String> ids = new ArrayList<>();
    long from = Long.MAX_VALUE;
    long to = Long.MIN_VALUE;
    for (RequestOutcome r : result.outcomes()) {
      if (r.success()) {
        ids.add(r.traceId());
        from = Math.min(from, result.clock().unixNanos(r.startNanos()));
        to = Math.max(to, result.clock().unixNanos(r.endNanos()));
      }
    }
    note = "";
    nothingLanded = false;
    if (ids.isEmpty()) {
      note = "no request succeeded";
      return null;
    }
    String in = TraceReader.sqlList(ids);
    long landed = awaitLanding(in, ids.size(), from - SLACK_NS, to + SLACK_NS);
    if (landed == 0) {
      nothingLanded = true;
      note =
          "no engine span of its "
              + ids.size()
              + " requests reached "
              + store.description()
              + " within "
              + wait.toSeconds()
              + " s";
      return null;
    }
    new Analyzer(store).analyze(from - SLACK_NS, to + SLACK_NS, true);
    ComponentShares shares = read(in);
    if (shares.requests() < ids.size()) {
      note =
          shares.requests()
              + " of its "
              + ids.size()
              + " requests were attributed (the others' engine spans "
              + (landed < ids.size() ? "had not landed" : "did not make a request")
              + ")";
    }
    return shares.requests() == 0 ? null : shares;
  }

  /**
   * Polls until every request's engine span landed and no span arrived for a while, or the wait
   * ends; returns the requests landed.
   */
  private long awaitLanding(String in, int expected, long fromNs, long toNs)
      throws InterruptedException {
    String requests =
        "SELECT uniqExact(TraceId) FROM otel_traces WHERE TraceId IN "
            + in
            + " AND "
            + EngineAdapters.requestWhere();
    String all =
        "SELECT count() FROM otel_traces WHERE Timestamp >= fromUnixTimestamp64Nano({from_ns:Int64})"
            + " AND Timestamp <= fromUnixTimestamp64Nano({to_ns:Int64})";
    Map<String, Object> window = Map.of("from_ns", fromNs, "to_ns", toNs);
    long deadline = System.nanoTime() + wait.toNanos();
    long landed = 0;
    long spans = -1;
    long quietSince = System.nanoTime();
    while (!stopping.getAsBoolean()) {
      landed = Long.parseLong(store.query(requests).single());
      long now = Long.parseLong(store.query(all, window).single());
      if (now != spans) {
        spans = now;
        quietSince = System.nanoTime();
      }
      if (landed >= expected && System.nanoTime() - quietSince >= QUIET_MS * 1_000_000L) {
        break;
      }
      if (System.nanoTime() >= deadline) {
        break;
      }
      Thread.sleep(POLL_MS);
    }
    return landed;
  }

  /**
   * The rows of the point's requests, summed: TTFT, each component, the limits named for their
   * queue time.
   */
  private ComponentShares read(String in) {
    StringBuilder sql = new StringBuilder("SELECT count(), sum(TtftNs)");
    for (TtftComponent c : TtftComponent.all()) {
      sql.append(", sum(").append(c.column()).append(')');
    }
    sql.append(" FROM llm_request_attribution FINAL WHERE TraceId IN ").append(in);
    List<String> row = store.query(sql.toString()).rows().getFirst();
    Map<String, Long> components = new LinkedHashMap<>();
    for (int i = 0; i < TtftComponent.all().size(); i++) {
      components.put(TtftComponent.all().get(i).id(), Long.parseLong(row.get(2 + i)));
    }
    // limits of one kind add up: their figures (97% full, 256) vary from request to request
    List<ComponentShares.Limit> limits = new ArrayList<>();
    for (List<String> l :
        store
            .query(
                "SELECT replaceRegexpAll(QueueLimit, '[0-9]+', 'N') AS kind, argMax(QueueLimit, QueueNs),"
                    + " count(), sum(QueueNs) FROM llm_request_attribution FINAL WHERE TraceId IN "
                    + in
                    + " AND QueueLimit != ''"
                    + " GROUP BY kind")
            .rows()) {
      limits.add(
          new ComponentShares.Limit(
              l.get(0), l.get(1), Integer.parseInt(l.get(2)), Long.parseLong(l.get(3))));
    }
    return new ComponentShares(
        Integer.parseInt(row.get(0)), Long.parseLong(row.get(1)), components, limits);
  }
}
