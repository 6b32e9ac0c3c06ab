package dev.llmlat.analyze.enginetraces;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The OTLP/JSON SGLang's own request tracing ({@code --enable-trace}, default trace level 3)
 * exports, with no llmlat SDK. Follows sgl-project/sglang main as crawled mid-2026:
 *
 * <ul>
 *   <li>{@code python/sglang/srt/observability/trace.py} @ 02a580880ee625d1d4a8c317ad913dcc0506cf79
 *       (TracerProvider with resource {@code service.name=sglang}, tracer "sglang server", 64-bit
 *       custom id generator, {@code TraceReqContext}: root, per-thread and slice spans, links,
 *       events)
 *   <li>{@code python/sglang/srt/observability/req_time_stats.py} @
 *       00ce49e05c17e08f643afab34f3cdcef14935ac0 ({@code RequestStage} names and levels; which
 *       timestamp opens and closes each slice)
 *   <li>{@code python/sglang/srt/managers/tokenizer_manager.py} @
 *       001067fffe33427bee0ed2f007fb7551a1d76b44 (traceparent/tracestate taken from the HTTP
 *       headers; tokenize and dispatch stamps; root attributes set in {@code convert_to_span_attrs}
 *       just before the finish stamp)
 *   <li>{@code python/sglang/srt/managers/scheduler_components/batch_result_processor.py} @
 *       003ddbce039cd49b05c84568b7b357031366abf7 (chunk, prefill-finished, decode and completion
 *       stamps), and the scheduler process entry ({@code trace_set_thread_info("Scheduler",
 *       tp_rank, dp_rank, pp_rank)}).
 * </ul>
 *
 * <p>Layout per request, unified server (role "unified" prints as an empty prefix, so the root name
 * begins with a space): tokenizer process: root {@code " Req <rid[:8]>"} (child of the gateway's
 * span when a traceparent came in, else a new trace with a 64-bit id), its thread span {@code
 * "Tokenizer (host:<machine-id[:8]> | pid:<tid>)"} with slices {@code tokenize} and {@code
 * api_server_dispatch}; scheduler process: thread span {@code "Scheduler [TP 0] [PP 0] (host:… |
 * pid:…)"} (parent: the root, propagated, so a remote parent) with slices {@code request_process},
 * {@code prefill_waiting}, {@code prefill_forward} (children {@code chunked_prefill} when the
 * prompt took more than one chunk), {@code decode_forward} (children {@code decode_loop}, one per
 * decode step, attribute {@code decode_ct}). The overlap scheduler (SGLang's default) path is
 * written: the first decode batch is scheduled before the prefill result is processed, so there is
 * no {@code decode_waiting} slice and {@code decode_forward} starts where {@code prefill_forward}
 * ends. A request with {@code kvTransferNs > 0} is written as the decode server of a
 * PD-disaggregated pair (root {@code "decode Req …"}, thread {@code "Decode Scheduler …"}, slices
 * {@code decode_prepare}, {@code decode_bootstrap}, {@code decode_transferred}, {@code
 * decode_waiting}, {@code decode_forward} with {@code fake_output} and {@code decode_loop}); its
 * prefill runs on the prefill server, which is not written here.
 *
 * <p>Times SGLang has no counterpart for in {@link RequestTruth} (tokenize end, dispatch start and
 * end, wait-queue entry, the disaggregated bootstrap phases) are placed at fixed fractions of the
 * gaps around them; every truth field lands exactly on a span boundary. Real SGLang slice stamps
 * are {@code perf_counter} seconds converted to Unix ns through a double, so adjacent boundaries
 * can disagree by a fraction of a microsecond; this writer does not add that noise.
 */
public final class SglangTraceWriter implements EngineTraceWriter {

  static final String SERVICE_NAME = "sglang";
  static final String SCOPE_NAME = "sglang server";

  /** Whatever opentelemetry-sdk the deployment installed; SGLang does not pin it. */
  static final String SDK_VERSION = "1.39.1";

  /** SGLANG_OTLP_EXPORTER_MAX_EXPORT_BATCH_SIZE default. */
  static final int MAX_EXPORT_BATCH = 64;

  /** SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK; | IS_REMOTE (0x200) when the parent/link is remote. */
  static final int FLAGS_LOCAL = 0x100;

  static final int FLAGS_REMOTE = 0x300;
  static final int KIND_INTERNAL = 1;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HexFormat HEX = HexFormat.of();

  @Override
  public String engine() {
    return "sglang";
  }

  @Override
  public List<String> write(List<RequestTruth> requests, String instance) {
    Process tokenizer = new Process(pid(instance, 0));
    Process scheduler = new Process(pid(instance, 1));
    String hostId = hostId(instance);
    for (RequestTruth r : requests) {
      writeRequest(r, requests, instance, hostId, tokenizer, scheduler);
    }
    List<Batch> batches = new ArrayList<>();
    tokenizer.batches(batches);
    scheduler.batches(batches);
    batches.sort(Comparator.comparingLong(Batch::exportedAfter));
    List<String> lines = new ArrayList<>(batches.size());
    for (Batch b : batches) {
      lines.add(document(b.spans()));
    }
    return lines;
  }

  // ---------------------------------------------------------------- one request

  private static void writeRequest(
      RequestTruth r,
      List<RequestTruth> all,
      String instance,
      String hostId,
      Process tokenizerProc,
      Process schedulerProc) {
    SplittableRandom ids = new SplittableRandom(seed(instance, r.requestId()));
    boolean disagg = r.kvTransferNs() > 0;
    String role = disagg ? "decode" : "";

    // Ids: a traceparent makes the gateway's trace id the trace id and its span the root's parent;
    // without one the custom generator draws 64 random bits (upper half of the OTLP id all zero).
    boolean hasParent = !r.parentSpanId().isEmpty() && !r.traceId().isEmpty();
    String traceId = hasParent ? r.traceId() : "0000000000000000" + id64(ids);

    long[] tokens =
        r.tokenNs() != null && r.tokenNs().length > 0 ? r.tokenNs() : new long[] {r.firstTokenNs()};
    int n = tokens.length;
    long prefillEnd = r.prefillChunks().isEmpty() ? r.firstTokenNs() : r.prefillEndNs();
    long completion = Math.max(prefillEnd, tokens[n - 1]);

    // Tokenizer-side stamps between received and the scheduler's receipt.
    long received = r.receivedNs();
    long gap = Math.max(0, r.arrivalNs() - received);
    long tokenizeEnd = received + gap * 60 / 100;
    long dispatchStart = received + gap * 65 / 100;
    long dispatchEnd = received + gap * 80 / 100;

    // ---- tokenizer process: root, thread, tokenize, api_server_dispatch
    String origRid = r.requestId().substring(r.requestId().lastIndexOf('_') + 1);
    Span root =
        new Span(
            traceId,
            id64(ids),
            hasParent ? r.parentSpanId() : "",
            hasParent ? FLAGS_REMOTE : FLAGS_LOCAL,
            role + " Req " + head(origRid, 8),
            received,
            r.finishNs());
    root.attr("rid", origRid);
    root.attr("module", "sglang::request");
    if (disagg) {
      root.attr("bootstrap_room", "0x" + Long.toHexString(bootstrapRoom(instance, r.requestId())));
    }
    // convert_to_span_attrs runs before set_finished_time, so only the latencies that do not need
    // the
    // finish stamp are present (time to first token, prefill); e2e/decode/inference never appear.
    root.attr("gen_ai.usage.completion_tokens", (long) r.outputTokens());
    root.attr("gen_ai.usage.prompt_tokens", (long) r.promptTokens());
    root.attr("gen_ai.usage.cached_tokens", 0L);
    root.attr("gen_ai.request.id", r.requestId());
    root.attr("gen_ai.response.model", r.model());
    if (r.finishReason() != null && !r.finishReason().isEmpty()) {
      root.attr("gen_ai.response.finish_reasons", "[\"" + r.finishReason() + "\"]");
    }
    root.attr("gen_ai.latency.time_to_first_token", (r.firstTokenNs() - received) / 1e9);
    root.attr("gen_ai.latency.time_in_model_prefill", (r.firstTokenNs() - dispatchEnd) / 1e9);

    Span tokThread =
        new Span(
            traceId,
            id64(ids),
            root.spanId,
            FLAGS_LOCAL,
            "Tokenizer (host:" + head(hostId, 8) + " | pid:" + tokenizerProc.pid + ")",
            received,
            dispatchEnd);
    tokThread.attr("host_id", hostId);
    tokThread.attr("pid", (long) tokenizerProc.pid);
    tokThread.attr("thread_label", "Tokenizer");
    Span tokenize =
        new Span(
            traceId, id64(ids), tokThread.spanId, FLAGS_LOCAL, "tokenize", received, tokenizeEnd);
    Span dispatch =
        new Span(
            traceId,
            id64(ids),
            tokThread.spanId,
            FLAGS_LOCAL,
            "api_server_dispatch",
            dispatchStart,
            dispatchEnd);
    dispatch.link(traceId, tokenize.spanId, FLAGS_LOCAL);
    tokenizerProc.add(tokenize, dispatch, tokThread, root);

    // ---- scheduler process: thread span (remote parent: the propagated root) and slices
    String label = disagg ? "Decode Scheduler" : "Scheduler";
    Span schThread =
        new Span(
            traceId,
            id64(ids),
            root.spanId,
            FLAGS_REMOTE,
            label
                + " [TP 0]  [PP 0] (host:"
                + head(hostId, 8)
                + " | pid:"
                + schedulerProc.pid
                + ")",
            r.arrivalNs(),
            completion);
    schThread.attr("tp_rank", 0L);
    schThread.attr("pp_rank", 0L);
    schThread.attr("host_id", hostId);
    schThread.attr("pid", (long) schedulerProc.pid);
    schThread.attr("thread_label", label);

    List<Span> slices = new ArrayList<>();
    // Top-level slices link to the previous top-level slice; the first one links to the tokenizer's
    // api_server_dispatch, which was open when the request was pickled (a remote span context).
    TopLevel top = new TopLevel(traceId, dispatch.spanId, FLAGS_REMOTE);
    long scheduled = r.scheduledNs();
    Span forward;
    if (!disagg) {
      long waitEntry = r.arrivalNs() + Math.min(r.queueNs() / 10, 50_000L);
      slices.add(
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "request_process",
                  r.arrivalNs(),
                  waitEntry)));
      slices.add(
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "prefill_waiting",
                  waitEntry,
                  scheduled)));
      Span prefill =
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "prefill_forward",
                  scheduled,
                  prefillEnd));
      List<RequestTruth.Chunk> chunks = r.prefillChunks();
      if (chunks.size() > 1) {
        // One chunked_prefill per chunk, contiguous: each starts where the previous one's result
        // was
        // processed (the first at the forward entry) and ends at its own result.
        long from = scheduled;
        for (RequestTruth.Chunk c : chunks) {
          Span cs =
              new Span(
                  traceId,
                  id64(ids),
                  prefill.spanId,
                  FLAGS_LOCAL,
                  "chunked_prefill",
                  from,
                  c.endNs());
          scheduleEvent(cs, clamp(c.startNs(), from, c.endNs()), "prefill", all, ids);
          slices.add(cs);
          from = c.endNs();
        }
      } else {
        scheduleEvent(prefill, scheduled, "prefill", all, ids);
      }
      slices.add(prefill);
      forward =
          n > 1
              ? top.next(
                  new Span(
                      traceId,
                      id64(ids),
                      schThread.spanId,
                      FLAGS_LOCAL,
                      "decode_forward",
                      prefillEnd,
                      tokens[n - 1]))
              : null;
    } else {
      long slack = Math.max(0, scheduled - r.arrivalNs() - r.kvTransferNs());
      long prepareEnd = r.arrivalNs() + slack / 4;
      long transferStart = r.arrivalNs() + slack / 2;
      long transferEnd = transferStart + r.kvTransferNs();
      slices.add(
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "decode_prepare",
                  r.arrivalNs(),
                  prepareEnd)));
      slices.add(
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "decode_bootstrap",
                  prepareEnd,
                  transferStart)));
      slices.add(
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "decode_transferred",
                  transferStart,
                  transferEnd)));
      slices.add(
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "decode_waiting",
                  transferEnd,
                  scheduled)));
      forward =
          top.next(
              new Span(
                  traceId,
                  id64(ids),
                  schThread.spanId,
                  FLAGS_LOCAL,
                  "decode_forward",
                  scheduled,
                  completion));
      Span fake =
          new Span(
              traceId,
              id64(ids),
              forward.spanId,
              FLAGS_LOCAL,
              "fake_output",
              scheduled,
              prefillEnd);
      scheduleEvent(fake, scheduled, "prebuilt", all, ids);
      slices.add(fake);
    }
    if (forward != null) {
      // decode_loop k: from the previous step's result (the first from the prefill/prebuilt result)
      // to
      // the step that produced token k + 1.
      long from = prefillEnd;
      for (int k = 0; k + 1 < n; k++) {
        Span loop =
            new Span(
                traceId,
                id64(ids),
                forward.spanId,
                FLAGS_LOCAL,
                "decode_loop",
                from,
                tokens[k + 1]);
        loop.attr("decode_ct", (long) k);
        scheduleEvent(loop, from + (tokens[k + 1] - from) / 2, "decode", all, ids);
        slices.add(loop);
        from = tokens[k + 1];
      }
      slices.add(forward);
    }
    schedulerProc.add(slices.toArray(Span[]::new));
    schedulerProc.add(schThread);
  }

  /**
   * The "schedule" event set_schedule_time_batch adds (level 3), landing in the slice covering it.
   */
  private static void scheduleEvent(
      Span s, long ts, String mode, List<RequestTruth> all, SplittableRandom ids) {
    long batch = all.stream().filter(o -> o.scheduledNs() <= ts && ts <= o.finishNs()).count();
    s.event(
        "schedule",
        ts,
        List.of(
            new Attr("bid", HEX.toHexDigits(ids.nextInt())),
            new Attr("batch_size", Math.max(1L, batch)),
            new Attr("forward_mode", mode)));
  }

  // ---------------------------------------------------------------- OTLP/JSON

  private static String document(List<Span> spans) {
    ObjectNode doc = JSON.createObjectNode();
    ObjectNode rs = doc.putArray("resourceSpans").addObject();
    ArrayNode resAttrs = rs.putObject("resource").putArray("attributes");
    // Resource.create(): the SDK defaults first, then the caller's service.name; no host or process
    // attributes, nothing that tells one replica from another.
    attr(resAttrs, "telemetry.sdk.language", "python");
    attr(resAttrs, "telemetry.sdk.name", "opentelemetry");
    attr(resAttrs, "telemetry.sdk.version", SDK_VERSION);
    attr(resAttrs, "service.name", SERVICE_NAME);
    ObjectNode ss = rs.putArray("scopeSpans").addObject();
    ss.putObject("scope").put("name", SCOPE_NAME);
    ArrayNode out = ss.putArray("spans");
    for (Span s : spans) {
      ObjectNode o = out.addObject();
      o.put("traceId", s.traceId);
      o.put("spanId", s.spanId);
      if (!s.parentSpanId.isEmpty()) {
        o.put("parentSpanId", s.parentSpanId);
      }
      o.put("flags", s.flags);
      o.put("name", s.name);
      o.put("kind", KIND_INTERNAL);
      o.put("startTimeUnixNano", Long.toString(s.start));
      o.put("endTimeUnixNano", Long.toString(s.end));
      if (!s.attrs.isEmpty()) {
        ArrayNode a = o.putArray("attributes");
        s.attrs.forEach(x -> attr(a, x.key(), x.value()));
      }
      if (!s.events.isEmpty()) {
        ArrayNode ev = o.putArray("events");
        for (Event e : s.events) {
          ObjectNode eo = ev.addObject();
          eo.put("timeUnixNano", Long.toString(e.ts()));
          eo.put("name", e.name());
          ArrayNode a = eo.putArray("attributes");
          e.attrs().forEach(x -> attr(a, x.key(), x.value()));
        }
      }
      if (!s.links.isEmpty()) {
        ArrayNode ln = o.putArray("links");
        for (Link l : s.links) {
          ln.addObject()
              .put("traceId", l.traceId())
              .put("spanId", l.spanId())
              .put("flags", l.flags());
        }
      }
      o.putObject("status");
    }
    try {
      return JSON.writeValueAsString(doc);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Typed as the Python SDK's encoder types them: str, int (int64, a JSON string), float. */
  private static void attr(ArrayNode to, String key, Object value) {
    ObjectNode kv = to.addObject();
    kv.put("key", key);
    ObjectNode v = kv.putObject("value");
    switch (value) {
      case String s -> v.put("stringValue", s);
      case Long l -> v.put("intValue", Long.toString(l));
      case Double d -> v.put("doubleValue", d);
      case Boolean b -> v.put("boolValue", b);
      default -> throw new IllegalArgumentException("attribute " + key + ": " + value.getClass());
    }
  }

  // ---------------------------------------------------------------- model

  record Attr(String key, Object value) {}

  record Event(String name, long ts, List<Attr> attrs) {}

  record Link(String traceId, String spanId, int flags) {}

  record Batch(List<Span> spans, long exportedAfter) {}

  static final class Span {
    final String traceId;
    final String spanId;
    final String parentSpanId;
    final int flags;
    final String name;
    final long start;
    final long end;
    final List<Attr> attrs = new ArrayList<>();
    final List<Event> events = new ArrayList<>();
    final List<Link> links = new ArrayList<>();

    Span(
        String traceId,
        String spanId,
        String parentSpanId,
        int flags,
        String name,
        long start,
        long end) {
      this.traceId = traceId;
      this.spanId = spanId;
      this.parentSpanId = parentSpanId;
      this.flags = flags;
      this.name = name;
      this.start = start;
      this.end = Math.max(start, end);
    }

    void attr(String key, Object value) {
      attrs.add(new Attr(key, value));
    }

    void event(String name, long ts, List<Attr> attrs) {
      events.add(new Event(name, ts, attrs));
    }

    void link(String traceId, String spanId, int flags) {
      links.add(new Link(traceId, spanId, flags));
    }
  }

  /** The per-thread "previous top-level slice" SGLang links each new top-level slice to. */
  private static final class TopLevel {
    private String traceId;
    private String spanId;
    private int flags;

    TopLevel(String traceId, String spanId, int flags) {
      this.traceId = traceId;
      this.spanId = spanId;
      this.flags = flags;
    }

    Span next(Span s) {
      s.link(traceId, spanId, flags);
      traceId = s.traceId;
      spanId = s.spanId;
      flags = FLAGS_LOCAL;
      return s;
    }
  }

  /** One process's BatchSpanProcessor: spans queue as they end, exported 64 at a time. */
  private static final class Process {
    final int pid;
    final List<Span> ended = new ArrayList<>();

    Process(int pid) {
      this.pid = pid;
    }

    void add(Span... spans) {
      ended.addAll(List.of(spans));
    }

    void batches(List<Batch> to) {
      List<Span> sorted = new ArrayList<>(ended);
      sorted.sort(
          Comparator.comparingLong(s -> s.end)); // stable: ties keep the order they ended in
      for (int i = 0; i < sorted.size(); i += MAX_EXPORT_BATCH) {
        List<Span> b = sorted.subList(i, Math.min(sorted.size(), i + MAX_EXPORT_BATCH));
        to.add(new Batch(List.copyOf(b), b.get(b.size() - 1).end));
      }
    }
  }

  // ---------------------------------------------------------------- ids

  private static long seed(String instance, String requestId) {
    return instance.hashCode() * 0x9E3779B97F4A7C15L + requestId.hashCode();
  }

  private static String id64(SplittableRandom r) {
    long v;
    do {
      v = r.nextLong();
    } while (v == 0);
    return HEX.toHexDigits(v);
  }

  /** /etc/machine-id of the instance's host: 32 hex digits. */
  static String hostId(String instance) {
    SplittableRandom r = new SplittableRandom(instance.hashCode() ^ 0x5DEECE66DL);
    return HEX.toHexDigits(r.nextLong()) + HEX.toHexDigits(r.nextLong());
  }

  /** threading.get_native_id() of the tokenizer (main) thread, or of the scheduler process. */
  static int pid(String instance, int process) {
    int base = 1000 + Math.floorMod(instance.hashCode(), 60_000);
    return process == 0 ? base : base + 213;
  }

  /** The router's random.randint(0, 2**63 - 1) bootstrap room, here fixed per request. */
  private static long bootstrapRoom(String instance, String requestId) {
    return new SplittableRandom(seed(instance, requestId) ^ 0xB00757L).nextLong() & Long.MAX_VALUE;
  }

  private static String head(String s, int n) {
    return s.length() <= n ? s : s.substring(0, n);
  }

  private static long clamp(long v, long lo, long hi) {
    return Math.max(lo, Math.min(v, hi - 1 >= lo ? hi - 1 : lo));
  }
}
