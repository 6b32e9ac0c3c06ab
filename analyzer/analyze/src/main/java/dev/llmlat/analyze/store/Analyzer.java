package dev.llmlat.analyze.store;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.ClockCorrection;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.attribution.TraceAttribution;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.attribution.engines.UnknownEngine;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import dev.llmlat.store.ClickHouseStore;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Aligns the layers' clocks and attributes requests' TTFT and inter-token gaps, reading spans from
 * the store and writing {@code llm_request_attribution}.
 */
public final class Analyzer {
  public static final String VERSION = "llmlat-analyzer 0.1";
  private static final long STEP_WINDOW_NS = 60_000_000_000L;
  private static final int CHUNK = 20_000;

  /** Added to the longest span for the chunk margins: room for clock skew between hosts. */
  private static final long SKEW_SLACK_NS = 10_000_000_000L;

  /**
   * The condition "is a request span of some engine convention" (names are the adapters'
   * constants).
   */
  static final String REQUESTS = EngineAdapters.requestWhere();

  private final ClickHouseStore store;
  private final TraceReader reader;
  private final int chunk;
  private final String tenantKey;
  private final boolean queueBreakdown;

  public Analyzer(ClickHouseStore store) {
    this(store, CHUNK);
  }

  /** With {@code chunk} requests per read (tests cut small chunks to cross their boundaries). */
  public Analyzer(ClickHouseStore store, int chunk) {
    this(store, chunk, LlmlatAttributes.TENANT, true);
  }

  private Analyzer(ClickHouseStore store, int chunk, String tenantKey, boolean queueBreakdown) {
    if (chunk < 1) {
      throw new IllegalArgumentException("chunk must be at least 1");
    }
    if (tenantKey == null || tenantKey.isBlank()) {
      throw new IllegalArgumentException("the tenant attribute must be a non-empty attribute name");
    }
    this.store = store;
    this.reader = new TraceReader(store);
    this.chunk = chunk;
    this.tenantKey = tenantKey;
    this.queueBreakdown = queueBreakdown;
  }

  /**
   * The same analyzer reading each request's tenant from the span attribute {@code key} instead of
   * {@code llmlat.tenant}.
   */
  public Analyzer withTenantAttribute(String key) {
    return new Analyzer(store, chunk, key, queueBreakdown);
  }

  /**
   * The same analyzer without the queue breakdown (each request's queue left whole): the baseline
   * against which {@code bench analyze} measures what splitting the queues costs.
   */
  public Analyzer withoutQueueBreakdown() {
    return new Analyzer(store, chunk, tenantKey, false);
  }

  /** What one run did. */
  public record Summary(int requests, int written, long fromNs, long toNs) {}

  /**
   * Attributes the requests that arrived in [fromNs, toNs]; with {@code onlyNew}, only those
   * without a row in {@code llm_request_attribution} yet. Re-running is idempotent.
   */
  public Summary analyze(long fromNs, long toNs, boolean onlyNew) {
    return analyze(fromNs, toNs, onlyNew, a -> {});
  }

  /**
   * Like {@link #analyze(long, long, boolean)}, handing each attribution to {@code onWritten} once
   * its row is written.
   */
  public Summary analyze(
      long fromNs, long toNs, boolean onlyNew, Consumer<? super Attribution> onWritten) {
    // requests of every engine convention, and gateway requests whose engine no adapter knows
    // PREWHERE on the span name and kind first: the attribute maps are read only for those rows
    String sql =
        "SELECT TraceId, toUnixTimestamp64Nano(min(Timestamp)) FROM otel_traces PREWHERE ("
            + EngineAdapters.requestNameWhere()
            + " OR SpanKind = 'Server') WHERE ("
            + REQUESTS
            + " OR ("
            + UnknownEngine.GATEWAY_SERVER_WHERE
            + ")) AND "
            + TraceReader.IN_WINDOW
            + (onlyNew ? " AND TraceId NOT IN (SELECT TraceId FROM llm_request_attribution)" : "")
            + " GROUP BY TraceId ORDER BY 2";
    List<List<String>> rows = store.query(sql, TraceReader.window(fromNs, toNs)).rows();
    if (rows.isEmpty()) {
      return new Summary(0, 0, fromNs, toNs);
    }
    // A request's spans, and the steps that ran while it waited or ran, start within one longest
    // span of its engine span: that (plus skew slack), not fixed minutes, bounds each chunk's read.
    long longest =
        longestSpanNs(
            Long.parseLong(rows.get(0).get(1)) - STEP_WINDOW_NS,
            Long.parseLong(rows.get(rows.size() - 1).get(1)) + 2 * STEP_WINDOW_NS);
    long before = Math.min(STEP_WINDOW_NS, longest + SKEW_SLACK_NS);
    long after = Math.min(2 * STEP_WINDOW_NS, longest + SKEW_SLACK_NS);
    List<Chunk> chunks = new ArrayList<>();
    for (int i = 0; i < rows.size(); i += chunk) {
      List<List<String>> part = rows.subList(i, Math.min(rows.size(), i + chunk));
      long first = Long.parseLong(part.get(0).get(1));
      long last = Long.parseLong(part.get(part.size() - 1).get(1));
      chunks.add(new Chunk(part, first - before, last + after));
    }
    int written =
        chunks.size() == 1
            ? analyzeAlone(chunks.get(0), onWritten)
            : analyzePipelined(chunks, onWritten);
    return new Summary(rows.size(), written, fromNs, toNs);
  }

  /** The requests of one chunk (trace id, arrival) and the window their spans are read from. */
  private record Chunk(List<List<String>> requests, long fromNs, long toNs) {}

  /** One chunk: read, attribute, write, in turn. */
  private int analyzeAlone(Chunk c, Consumer<? super Attribution> onWritten) {
    List<Attribution> result = attribute(c, read(c));
    AttributionWriter.write(store, result, VERSION);
    result.forEach(onWritten);
    return result.size();
  }

  /**
   * Several chunks, the store's part beside the attribution's: while this thread attributes chunk k
   * (and encodes its rows), a thread of the store reads chunk k+1 (and aligns its clocks) and
   * inserts chunk k-1's rows (the store runs them one after the other, in its own native threads).
   * At most three chunks are held at once. Results, rows and {@code onWritten}'s calls (on this
   * thread, in chunk order, each after its chunk's rows are written) are those of reading,
   * attributing and writing each chunk in turn.
   */
  private int analyzePipelined(List<Chunk> chunks, Consumer<? super Attribution> onWritten) {
    ExecutorService io =
        Executors.newSingleThreadExecutor(
            r -> Thread.ofPlatform().daemon().name("llmlat-analyze-store").unstarted(r));
    Future<TraceAttribution.Aligned> next = io.submit(() -> read(chunks.get(0)));
    Future<?> writing = null;
    List<Attribution> pending = List.of();
    int written = 0;
    try {
      for (int k = 0; k < chunks.size(); k++) {
        Chunk c = chunks.get(k);
        TraceAttribution.Aligned spans = await(next);
        if (k + 1 < chunks.size()) {
          Chunk following = chunks.get(k + 1);
          next = io.submit(() -> read(following));
        }
        List<Attribution> result = attribute(c, spans);
        if (writing != null) {
          Future<?> w = writing;
          writing = null;
          await(w);
          pending.forEach(onWritten);
        }
        byte[] rows = AttributionWriter.rows(result, VERSION); // encoded here, inserted there
        writing = io.submit(() -> AttributionWriter.insert(store, rows));
        pending = result;
        written += result.size();
      }
      Future<?> w = writing;
      writing = null;
      await(w);
      pending.forEach(onWritten);
      return written;
    } catch (RuntimeException | Error e) {
      // what was handed to the store still reaches it, and is handed on, as when each chunk is
      // written before the next is read
      if (writing != null) {
        try {
          await(writing);
          pending.forEach(onWritten);
        } catch (RuntimeException | Error w) {
          e.addSuppressed(w);
        }
      }
      throw e;
    } finally {
      next.cancel(false);
      io.shutdown();
      awaitTermination(io);
    }
  }

  /** The chunk's spans, clock-aligned. */
  private TraceAttribution.Aligned read(Chunk c) {
    // One time-range read instead of a lookup by 20k ids: the table is ordered by time within
    // each span name, so the engine reads just that range.
    List<SpanRecord> spans =
        reader.where(TraceReader.IN_WINDOW, TraceReader.window(c.fromNs(), c.toNs()));
    spans.addAll(
        reader.collectives(spans)); // tensor-parallel steps are matched across ranks by them
    return TraceAttribution.alignClocks(spans);
  }

  private List<Attribution> attribute(Chunk c, TraceAttribution.Aligned spans) {
    Set<String> ids = new HashSet<>(c.requests().stream().map(r -> r.get(0)).toList());
    return TraceAttribution.attribute(spans, ids::contains, tenantKey, queueBreakdown);
  }

  /** The task's result; its failure rethrown as it was thrown. */
  private static <T> T await(Future<T> task) {
    try {
      return task.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      if (e.getCause() instanceof Error r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while analyzing", e);
    }
  }

  /**
   * Waits for the store's thread to finish the statement it runs (the store is not left busy behind
   * the caller).
   */
  private static void awaitTermination(ExecutorService io) {
    boolean interrupted = false;
    while (true) {
      try {
        if (io.awaitTermination(1, TimeUnit.MINUTES)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** The longest span that starts in [fromNs, toNs] (0 when none). */
  private long longestSpanNs(long fromNs, long toNs) {
    String longest =
        store
            .query(
                "SELECT max(Duration) FROM otel_traces WHERE " + TraceReader.IN_WINDOW,
                TraceReader.window(fromNs, toNs))
            .single();
    return longest == null || longest.isEmpty() ? 0 : Long.parseLong(longest);
  }

  /** One request's attribution and the aligned spans it was computed from. */
  public record Explained(Attribution attribution, List<SpanRecord> spans) {}

  /** One request, aligned and attributed; clock skew is estimated from the pairs around it. */
  public Attribution explain(String traceId) {
    return explainWithSpans(traceId).attribution();
  }

  /** Like {@link #explain} with the aligned spans of the request and of the steps around it. */
  public Explained explainWithSpans(String traceId) {
    String id = TraceReader.checkTraceId(traceId);
    List<SpanRecord> trace = reader.read(List.of(id), 1, 0);
    if (trace.isEmpty()) {
      throw new IllegalArgumentException(
          "no request with trace id " + id + " in the store: it holds no spans of that trace");
    }
    trace = withOtherHalves(trace, id);
    SpanRecord request =
        TraceAttribution.requests(trace).stream()
            .findFirst()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "no request with trace id "
                            + id
                            + " in the store: no engine request span ("
                            + EngineAdapters.names()
                            + ") and no gateway server span with an upstream call"));
    long t = request.startNs();
    // the trace as read above, plus the step spans around it (steps of its own trace only once)
    Map<String, SpanRecord> merged = new java.util.LinkedHashMap<>();
    for (SpanRecord s : trace) {
      merged.put(s.traceId() + s.spanId(), s);
    }
    for (SpanRecord s : reader.read(List.of(), t - STEP_WINDOW_NS, t + 10 * STEP_WINDOW_NS)) {
      merged.putIfAbsent(s.traceId() + s.spanId(), s);
    }
    List<SpanRecord> spans = new ArrayList<>(merged.values());
    // client/server pairs of other requests in the minutes around it: at most 500 traces' worth
    Map<String, Object> around = TraceReader.window(t - 2 * STEP_WINDOW_NS, t + 2 * STEP_WINDOW_NS);
    around.put("trace_id", id);
    spans.addAll(
        reader.where(
            "TraceId IN (SELECT TraceId FROM otel_traces WHERE "
                + REQUESTS
                + " AND TraceId != {trace_id:String} AND "
                + TraceReader.IN_WINDOW
                + " LIMIT 500)"
                + " AND (SpanKind IN ('Client', 'Server') OR "
                + REQUESTS
                + ")",
            around));
    TraceAttribution.Aligned aligned = TraceAttribution.alignClocks(spans);
    // the halves of a request split over traces are one request: under the kept half's trace id
    String kept =
        aligned.spans().stream()
            .filter(s -> id.equals(s.attr(LlmlatAttributes.JOINED_FROM_TRACE_ID)))
            .map(SpanRecord::traceId)
            .findFirst()
            .orElse(id);
    Attribution attribution =
        TraceAttribution.attribute(
                withOtherRequestsSteps(aligned, merged.keySet(), t), kept::equals, tenantKey)
            .stream()
            .findFirst()
            .orElseThrow();
    long from =
        attribution.criticalPath().isEmpty() ? t : attribution.criticalPath().get(0).startNs();
    List<SpanRecord> related =
        aligned.spans().stream()
            .filter(
                s ->
                    !TraceAttribution.isCollectiveKernel(
                        s)) // read for the ranks' match, not the request's spans
            .filter(
                s ->
                    s.traceId().equals(kept)
                        || s.links().stream().anyMatch(l -> l.traceId().equals(kept))
                        || (LlmlatSpanNames.STEP.equals(s.name())
                            && s.endNs() >= from
                            && s.startNs()
                                <= request.endNs()
                                    + (aligned
                                        .corrections()
                                        .getOrDefault(
                                            request.clockDomain(), ClockCorrection.none(""))
                                        .offsetAt(request.endNs()))))
            .toList();
    return new Explained(attribution, related);
  }

  /**
   * The trace plus the other half of a disaggregated request the engine put in a trace of its own:
   * the spans of the traces whose request spans share its engine's join key (SGLang's bootstrap
   * room, a shared request id).
   */
  private List<SpanRecord> withOtherHalves(List<SpanRecord> trace, String id) {
    List<SpanRecord> out = new ArrayList<>(trace);
    Set<String> seen = new HashSet<>();
    trace.forEach(s -> seen.add(s.traceId() + s.spanId()));
    for (SpanRecord r : TraceAttribution.requests(trace)) {
      for (dev.llmlat.attribution.engines.EngineAdapter a : EngineAdapters.all()) {
        String key = a.joinKeyAttribute();
        if (key.isEmpty() || r.attr(key).isEmpty()) {
          continue;
        }
        Map<String, Object> params =
            TraceReader.window(r.startNs() - STEP_WINDOW_NS, r.startNs() + STEP_WINDOW_NS);
        params.put("trace_id", id);
        params.put("join_key", key);
        params.put("join_value", r.attr(key));
        for (SpanRecord s :
            reader.where(
                "TraceId IN (SELECT TraceId FROM otel_traces WHERE SpanAttributes[{join_key:String}]"
                    + " = {join_value:String} AND TraceId != {trace_id:String} AND "
                    + TraceReader.IN_WINDOW
                    + " LIMIT 4)",
                params)) {
          if (seen.add(s.traceId() + s.spanId())) {
            out.add(s);
          }
        }
      }
    }
    return out;
  }

  /**
   * The aligned spans plus other requests' copies of the steps (vLLM, SGLang), what ran while this
   * one queued. They are shifted by the corrections found without them: they are no clock evidence,
   * and taken as such they would move the estimate away from what {@link #analyze} finds.
   */
  private TraceAttribution.Aligned withOtherRequestsSteps(
      TraceAttribution.Aligned aligned, Set<String> read, long t) {
    String names =
        TraceAttribution.PER_REQUEST_STEP_NAMES.stream()
            .sorted()
            .map(n -> "'" + n + "'") // constants, not input
            .collect(java.util.stream.Collectors.joining(","));
    List<SpanRecord> spans = new ArrayList<>(aligned.spans());
    Set<String> seen = new HashSet<>(read);
    aligned.spans().forEach(s -> seen.add(s.traceId() + s.spanId()));
    for (SpanRecord s :
        reader.where(
            "SpanName IN (" + names + ") AND " + TraceReader.IN_WINDOW,
            TraceReader.window(t - STEP_WINDOW_NS, t + 10 * STEP_WINDOW_NS))) {
      if (seen.add(s.traceId() + s.spanId())) {
        ClockCorrection c = aligned.corrections().get(s.clockDomain());
        spans.add(c == null || !c.applied() ? s : s.shifted(c.offsetAt(s.startNs())));
      }
    }
    return new TraceAttribution.Aligned(spans, aligned.corrections());
  }

  /** Every span that started in [fromNs, toNs], clock-aligned. */
  public List<SpanRecord> window(long fromNs, long toNs) {
    return TraceAttribution.alignClocks(
            reader.where(
                TraceReader.IN_WINDOW + " LIMIT 1000000", TraceReader.window(fromNs, toNs)))
        .spans();
  }
}
