package dev.llmlat.analyze.enginetraces;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Writes requests the way Hugging Face text-generation-inference (TGI, v3 backend) traces them when
 * started with {@code --otlp-endpoint}: the Rust router's {@code tracing} spans exported by {@code
 * tracing-opentelemetry} 0.21 through {@code opentelemetry-otlp} 0.13 (opentelemetry 0.20), and the
 * Python model server's gRPC spans exported by opentelemetry-python 1.33. No llmlat SDK.
 *
 * <p>Followed sources, repository huggingface/text-generation-inference at
 * db931fcf42da018a3657580c64bf2720f167f9ab (v3.3.7 + 1, workspace version 3.3.6-dev0, Jan 2026):
 *
 * <ul>
 *   <li>{@code router/src/logging.rs}: {@code init_logging} (resource = only {@code service.name},
 *       default {@code text-generation-inference.router}; sampler AlwaysOn; batch exporter over
 *       tonic) and {@code trace_context_middleware} (parses {@code traceparent} itself and hands
 *       the remote context to the handlers, which call {@code Span::set_parent}).
 *   <li>{@code router/src/server.rs}: {@code generate}, {@code generate_stream}, {@code
 *       chat_completions} handler spans with the {@code total_time}, {@code validation_time},
 *       {@code queue_time}, {@code inference_time}, {@code time_per_token}, {@code seed} fields
 *       recorded as {@code format!("{:?}")} text; {@code async_stream}.
 *   <li>{@code router/src/infer/mod.rs} ({@code generate}, {@code generate_stream}, {@code
 *       apply_chat_template}) and {@code router/src/validation.rs} ({@code validate}, {@code
 *       validate_input}, {@code tokenize}).
 *   <li>{@code backends/v3/src/backend.rs} ({@code schedule}, the batching loop, {@code prefill},
 *       {@code decode}, {@code filter_send_generations} / {@code send_generation}, {@code
 *       filter_batch}) and {@code backends/v3/src/queue.rs} ({@code append}, {@code queued}, {@code
 *       next_batch}, the {@code batch} root span and the per-request {@code infer} spans tied to it
 *       both ways with {@code follows_from}, which become OTLP links).
 *   <li>{@code backends/v3/src/client/{sharded_client,grpc_client}.rs} (client spans, context
 *       injected into the gRPC metadata by {@code backends/grpc-metadata}).
 *   <li>{@code server/text_generation_server/tracing.py} (the gRPC server interceptor span) and
 *       {@code models/flash_causal_lm.py} ({@code generate_token}, {@code concatenate}, {@code
 *       filter}); {@code launcher/src/main.rs} passes the router's service name to the shards too.
 *   <li>tokio-rs/tracing-opentelemetry v0.21.0 {@code src/layer.rs} (field to attribute mapping:
 *       u64 fields become strings, {@code code.*}/{@code thread.*}/{@code busy_ns}/{@code
 *       idle_ns}); open-telemetry/opentelemetry-rust v0.20.0 {@code opentelemetry-otlp/src/span.rs}
 *       (scope {@code opentelemetry-otlp} 0.13.0) and {@code
 *       opentelemetry-proto/src/transform/traces.rs} (one ResourceSpans per span).
 * </ul>
 *
 * <p>Model: one shard, a flash model with prefill chunking (the v3 default), streaming chat by
 * default. Chunks with equal start and end form one batch (one Prefill RPC when a request's first
 * chunk is in it, else one Decode RPC); output tokens stamped at the same instant form one decode
 * step. The token is handed to the HTTP side ({@code send_generation}) at the truth's token time.
 * What the truth lacks (token ids and texts, budgets, thread ids, busy/idle times, the few
 * microseconds of router work around each RPC) is filled with plausible values. TGI puts nothing
 * per process into its spans or resource; {@code instance} only seeds the random ids.
 */
public final class TgiTraceWriter implements EngineTraceWriter {

  /** Which HTTP route the gateway called; the handler span is named after the handler function. */
  public enum Endpoint {
    /** {@code POST /v1/chat/completions} with {@code "stream": true}. */
    CHAT_COMPLETIONS_STREAM("chat_completions", 1156),
    /** {@code POST /generate_stream}. */
    GENERATE_STREAM("generate_stream", 464),
    /** {@code POST /generate}. */
    GENERATE("generate", 261);

    final String spanName;
    final int line;

    Endpoint(String spanName, int line) {
      this.spanName = spanName;
      this.line = line;
    }

    public String spanName() {
      return spanName;
    }
  }

  /** Default {@code --otlp-service-name}; the launcher hands the same name to the Python shards. */
  public static final String SERVICE_NAME = "text-generation-inference.router";

  /** The Rust scope: {@code opentelemetry-otlp}'s {@code versioned_tracer}. */
  public static final String RUST_SCOPE = "opentelemetry-otlp";

  public static final String RUST_SCOPE_VERSION = "0.13.0";
  public static final String RUST_SCOPE_SCHEMA = "https://opentelemetry.io/schemas/1.21.0";

  /** Python scopes ({@code trace.get_tracer(__name__)}). */
  public static final String PY_SCOPE_GRPC = "text_generation_server.tracing";

  public static final String PY_SCOPE_MODEL = "text_generation_server.models.flash_causal_lm";
  public static final String PY_SDK_VERSION = "1.33.0";
  public static final String GRPC_SERVICE = "generate.v3.TextGenerationService";

  private static final String THREAD_NAME = "tokio-runtime-worker";
  private static final String SERVER_RS = "router/src/server.rs";
  private static final String INFER_RS = "router/src/infer/mod.rs";
  private static final String VALIDATION_RS = "router/src/validation.rs";
  private static final String BACKEND_RS = "backends/v3/src/backend.rs";
  private static final String QUEUE_RS = "backends/v3/src/queue.rs";
  private static final String SHARDED_RS = "backends/v3/src/client/sharded_client.rs";
  private static final String GRPC_RS = "backends/v3/src/client/grpc_client.rs";
  private static final String NS_SERVER = "text_generation_router::server";
  private static final String NS_INFER = "text_generation_router::infer";
  private static final String NS_VALIDATION = "text_generation_router::validation";
  private static final String NS_BACKEND = "text_generation_router_v3::backend";
  private static final String NS_QUEUE = "text_generation_router_v3::queue";
  private static final String NS_SHARDED = "text_generation_router_v3::client::sharded_client";
  private static final String NS_GRPC = "text_generation_router_v3::client::grpc_client";

  /** Router defaults assumed for the {@code next_batch} fields. */
  static final long MAX_BATCH_PREFILL_TOKENS = 4096;

  static final long MAX_BATCH_TOTAL_TOKENS = 262_144;

  private static final int BATCH_DOC_LIMIT = 512; // BatchSpanProcessor's max_export_batch_size
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Endpoint endpoint;

  public TgiTraceWriter() {
    this(Endpoint.CHAT_COMPLETIONS_STREAM);
  }

  public TgiTraceWriter(Endpoint endpoint) {
    this.endpoint = endpoint;
  }

  @Override
  public String engine() {
    return "tgi";
  }

  // ---------------------------------------------------------------- Rust Duration Debug text

  /**
   * {@code format!("{:?}", Duration::from_nanos(ns))}: the largest unit of s, ms, µs (U+00B5) or ns
   * whose integer part is non-zero (seconds are never turned into minutes), then the exact
   * remainder as decimals with trailing zeros dropped (no rounding, at most 9 digits).
   */
  public static String rustDurationDebug(long ns) {
    if (ns < 0) {
      throw new IllegalArgumentException("negative duration " + ns);
    }
    long secs = ns / 1_000_000_000L;
    long nanos = ns % 1_000_000_000L;
    if (secs > 0) {
      return decimal(secs, nanos, 100_000_000L, "s");
    } else if (nanos >= 1_000_000L) {
      return decimal(nanos / 1_000_000L, nanos % 1_000_000L, 100_000L, "ms");
    } else if (nanos >= 1_000L) {
      return decimal(nanos / 1_000L, nanos % 1_000L, 100L, "\u00b5s");
    }
    return nanos + "ns";
  }

  private static String decimal(long integer, long frac, long divisor, String unit) {
    StringBuilder b = new StringBuilder().append(integer);
    if (frac > 0) {
      b.append('.');
      while (frac > 0 && divisor > 0) {
        b.append((char) ('0' + frac / divisor));
        frac %= divisor;
        divisor /= 10;
      }
    }
    return b.append(unit).toString();
  }

  /** {@code Duration / u32}: the floor of the nanoseconds divided. */
  public static long rustDurationDiv(long ns, long rhs) {
    long secs = ns / 1_000_000_000L;
    long nanos = ns % 1_000_000_000L;
    long s = secs / rhs;
    long extraSecs = secs % rhs;
    long n = nanos / rhs + (extraSecs * 1_000_000_000L + nanos % rhs) / rhs;
    return s * 1_000_000_000L + n;
  }

  // ---------------------------------------------------------------- span model

  private static final class Sp {
    final String name;
    final String traceId;
    final String spanId;
    String parent = "";
    int kind = 1; // SPAN_KIND_INTERNAL
    long start;
    long end;
    final boolean python;
    final String pyScope;
    int flags; // python only
    final List<Object[]> attrs = new ArrayList<>();
    final List<String[]> links = new ArrayList<>();
    final List<Object[]> events = new ArrayList<>();
    long busy = -1;
    long idle = -1;

    Sp(String name, String traceId, String spanId, boolean python, String pyScope) {
      this.name = name;
      this.traceId = traceId;
      this.spanId = spanId;
      this.python = python;
      this.pyScope = pyScope;
    }

    Sp str(String k, String v) {
      attrs.add(new Object[] {k, v});
      return this;
    }

    Sp i64(String k, long v) {
      attrs.add(new Object[] {k, v});
      return this;
    }

    Sp bool(String k, boolean v) {
      attrs.add(new Object[] {k, v});
      return this;
    }

    Sp link(Sp other) {
      links.add(new String[] {other.traceId, other.spanId});
      return this;
    }

    /** Span entered the whole time it was open (sync fn, {@code .entered()}). */
    Sp entered() {
      busy = Math.max(0, end - start);
      idle = 0;
      return this;
    }

    /**
     * An instrumented future that completed at {@code activeEnd}: polled a little, parked the rest.
     */
    Sp polled(long activeEnd) {
      long active = Math.max(0, Math.min(activeEnd, end) - start);
      busy = Math.min(active, Math.max(Math.min(active, 1_500), active / 25));
      idle = active - busy;
      return this;
    }

    /** Never entered (parent-only spans such as {@code queued} and {@code infer}). */
    Sp neverEntered() {
      busy = 0;
      idle = 0;
      return this;
    }
  }

  private static final class Ids {
    final SplittableRandom rnd;

    Ids(long seed) {
      rnd = new SplittableRandom(seed);
    }

    String span() {
      long v;
      do {
        v = rnd.nextLong();
      } while (v == 0);
      return String.format("%016x", v);
    }

    String trace() {
      return span() + span();
    }
  }

  private static final class Req {
    final RequestTruth t;
    final int queueId;
    final String traceId;
    Sp handler;
    Sp schedule;
    Sp currentInfer;
    final List<Sp> infers = new ArrayList<>();
    final List<Sp> sends = new ArrayList<>();
    long entryDrop = Long.MIN_VALUE;
    boolean admitted;

    Req(RequestTruth t, int queueId, String traceId) {
      this.t = t;
      this.queueId = queueId;
      this.traceId = traceId;
    }

    int lastToken() {
      return t.tokenNs().length - 1;
    }
  }

  /** One forward pass of the engine: one Prefill or Decode RPC. */
  private static final class Pass {
    long start;
    final long end;
    long rpcEnd;
    boolean prefill;
    boolean startKnown;
    final Map<Req, Part> parts = new LinkedHashMap<>();

    Pass(long start, long end, boolean startKnown) {
      this.start = start;
      this.end = end;
      this.startKnown = startKnown;
    }

    Part part(Req r) {
      return parts.computeIfAbsent(r, k -> new Part());
    }
  }

  private static final class Part {
    int chunk = -1;
    final List<Integer> tokens = new ArrayList<>();
  }

  // ---------------------------------------------------------------- writer

  @Override
  public List<String> write(List<RequestTruth> requests, String instance) {
    long seed = instance.hashCode() * 0x9E3779B97F4A7C15L;
    for (RequestTruth r : requests) {
      seed = seed * 31 + r.requestId().hashCode();
    }
    Ids ids = new Ids(seed);

    // Queue ids are the queue's own counter, in append (arrival) order.
    List<RequestTruth> byArrival = new ArrayList<>(requests);
    byArrival.sort(Comparator.comparingLong(RequestTruth::arrivalNs));
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < byArrival.size(); i++) {
      RequestTruth t = byArrival.get(i);
      if (t.prefillChunks().isEmpty() || t.tokenNs().length == 0) {
        throw new IllegalArgumentException(
            t.requestId() + ": TGI needs a prefill chunk and a token");
      }
      // Without a traceparent the handler span starts a trace of its own.
      String traceId = t.parentSpanId().isEmpty() ? ids.trace() : t.traceId();
      reqs.add(new Req(t, i, traceId));
    }

    List<Sp> rust = new ArrayList<>();
    List<Sp> py = new ArrayList<>();
    for (Req r : reqs) {
      // Created before the batch side so infer/queued/send_generation can point at them.
      r.handler =
          rustSpan(
              endpoint.spanName,
              r.traceId,
              ids.span(),
              SERVER_RS,
              NS_SERVER,
              endpoint.line,
              2 + r.queueId % 16);
      r.schedule =
          rustSpan(
              "schedule", r.traceId, ids.span(), BACKEND_RS, NS_BACKEND, 78, 2 + r.queueId % 16);
    }

    List<Pass> passes = buildPasses(reqs);
    simulate(passes, ids, rust, py);
    for (Req r : reqs) {
      requestSpans(r, ids, rust);
    }

    List<String> docs = new ArrayList<>();
    rust.sort(Comparator.comparingLong((Sp s) -> s.end).thenComparingLong(s -> s.start));
    for (int i = 0; i < rust.size(); i += BATCH_DOC_LIMIT) {
      docs.add(rustDocument(rust.subList(i, Math.min(rust.size(), i + BATCH_DOC_LIMIT))));
    }
    py.sort(Comparator.comparingLong((Sp s) -> s.end).thenComparingLong(s -> s.start));
    for (int i = 0; i < py.size(); i += BATCH_DOC_LIMIT) {
      docs.add(pythonDocument(py.subList(i, Math.min(py.size(), i + BATCH_DOC_LIMIT))));
    }
    return docs;
  }

  private List<Pass> buildPasses(List<Req> reqs) {
    Map<String, Pass> chunkPasses = new LinkedHashMap<>();
    Map<Long, Pass> chunkPassByEnd = new HashMap<>();
    for (Req r : reqs) {
      List<RequestTruth.Chunk> chunks = r.t.prefillChunks();
      for (int c = 0; c < chunks.size(); c++) {
        RequestTruth.Chunk ch = chunks.get(c);
        Pass p =
            chunkPasses.computeIfAbsent(
                ch.startNs() + ":" + ch.endNs(), k -> new Pass(ch.startNs(), ch.endNs(), true));
        chunkPassByEnd.putIfAbsent(ch.endNs(), p);
        Part part = p.part(r);
        if (part.chunk < 0 || c < part.chunk) {
          part.chunk = c;
        }
      }
      RequestTruth.Chunk last = chunks.get(chunks.size() - 1);
      chunkPasses.get(last.startNs() + ":" + last.endNs()).part(r).tokens.add(0);
    }
    TreeMap<Long, Pass> decode = new TreeMap<>();
    for (Req r : reqs) {
      long[] tok = r.t.tokenNs();
      for (int i = 1; i < tok.length; i++) {
        long t = tok[i];
        Pass p = chunkPassByEnd.get(t);
        if (p == null) {
          p = decode.computeIfAbsent(t, k -> new Pass(k, k, false));
        }
        p.part(r).tokens.add(i);
      }
    }
    List<Pass> all = new ArrayList<>(chunkPasses.values());
    all.addAll(decode.values());
    all.sort(Comparator.comparingLong((Pass p) -> p.end).thenComparingLong(p -> p.start));
    long runningMaxEnd = Long.MIN_VALUE;
    for (Pass p : all) {
      p.prefill = p.parts.values().stream().anyMatch(x -> x.chunk == 0);
      if (!p.startKnown) {
        // A decode step runs from the end of the engine's previous forward pass.
        long s = runningMaxEnd;
        if (s == Long.MIN_VALUE || s >= p.end) {
          s = Long.MIN_VALUE;
          for (Map.Entry<Req, Part> e : p.parts.entrySet()) {
            for (int i : e.getValue().tokens) {
              if (i > 0) {
                s = Math.max(s, e.getKey().t.tokenNs()[i - 1]);
              }
            }
          }
          if (s == Long.MIN_VALUE || s >= p.end) {
            s = p.end - 1;
          }
        }
        p.start = s;
      }
      long rpcEnd = p.end;
      for (Map.Entry<Req, Part> e : p.parts.entrySet()) {
        for (int i : e.getValue().tokens) {
          rpcEnd = Math.max(rpcEnd, e.getKey().t.tokenNs()[i]);
        }
      }
      p.rpcEnd = rpcEnd;
      runningMaxEnd = Math.max(runningMaxEnd, p.rpcEnd);
    }
    return all;
  }

  private void simulate(List<Pass> passes, Ids ids, List<Sp> rust, List<Sp> py) {
    final int batchThread = 9;
    final int queueThread = 12;
    Set<Req> running = new LinkedHashSet<>();
    long nextBatchId = 0;
    long cachedBatchId = -1;
    for (int pi = 0; pi < passes.size(); pi++) {
      Pass p = passes.get(pi);
      long prevE = pi == 0 ? Long.MIN_VALUE : passes.get(pi - 1).rpcEnd;
      long nextStart = pi + 1 < passes.size() ? passes.get(pi + 1).start : Long.MAX_VALUE;
      long lead = prevE == Long.MIN_VALUE ? 60_000 : clamp((p.start - prevE) / 2, 0, 60_000);
      long tail =
          nextStart == Long.MAX_VALUE ? 400_000 : clamp((nextStart - p.rpcEnd) / 2, 0, 400_000);

      boolean outerLoop = running.isEmpty();
      List<Req> newcomers = new ArrayList<>();
      for (Map.Entry<Req, Part> e : p.parts.entrySet()) {
        if (e.getValue().chunk == 0) {
          newcomers.add(e.getKey());
        }
      }

      // Queue::next_batch, its own root span (the batching task has no current span).
      long minSched = Long.MAX_VALUE;
      long maxSched = Long.MIN_VALUE;
      for (Req r : newcomers) {
        minSched = Math.min(minSched, r.t.scheduledNs());
        maxSched = Math.max(maxSched, r.t.scheduledNs());
      }
      long nbStart;
      long nbEnd;
      if (p.prefill) {
        nbStart = Math.min(minSched, p.start - lead) - Math.min(lead, 20_000);
        nbEnd = Math.max(maxSched, Math.min(p.start, maxSched + lead / 2));
      } else {
        nbStart = p.start - lead;
        nbEnd = p.start - lead / 2;
      }
      Sp nb = nextBatchSpan(ids, nbStart, nbEnd, outerLoop, running, batchThread);
      rust.add(nb);

      // The batch root span and, per request, an infer span tied to it both ways.
      String batchTrace = ids.trace();
      Sp batch;
      if (p.prefill) {
        batch = rustSpan("batch", batchTrace, ids.span(), QUEUE_RS, NS_QUEUE, 268, queueThread);
        batch.start = Math.max(nbStart, minSched);
        batch.link(nb); // next_batch_span.follows_from(Span::current())
      } else {
        batch = rustSpan("batch", batchTrace, ids.span(), BACKEND_RS, NS_BACKEND, 274, batchThread);
        batch.start = nbEnd;
      }
      List<Req> linked = p.prefill ? newcomers : new ArrayList<>(p.parts.keySet());
      batch.str("batch_size", Long.toString(linked.size()));
      for (Req r : linked) {
        Sp inf =
            p.prefill
                ? rustSpan("infer", r.traceId, ids.span(), QUEUE_RS, NS_QUEUE, 427, queueThread)
                : rustSpan(
                    "infer", r.traceId, ids.span(), BACKEND_RS, NS_BACKEND, 277, batchThread);
        inf.parent = r.schedule.spanId;
        inf.start = p.prefill ? r.t.scheduledNs() : batch.start; // batch_time is stamped here too
        if (r.currentInfer != null) {
          r.currentInfer.end = inf.start;
        }
        batch.link(inf);
        inf.link(batch);
        r.currentInfer = inf;
        r.infers.add(inf);
        rust.add(inf.neverEntered());
      }
      if (p.prefill) {
        nextBatchId++;
        if (outerLoop || cachedBatchId < 0) {
          cachedBatchId = nextBatchId - 1;
        }
      }
      long batchId = nextBatchId - 1;

      // backend prefill()/decode() > ShardedClient > Client > Python server span > generate_token.
      String op = p.prefill ? "prefill" : "decode";
      long backendStart = Math.min(Math.max(nbEnd, batch.start), p.start);
      Sp backend =
          rustSpan(
              op,
              batchTrace,
              ids.span(),
              BACKEND_RS,
              NS_BACKEND,
              p.prefill ? 296 : 341,
              batchThread);
      backend.parent = batch.spanId;
      backend.start = backendStart;
      long d = Math.min(2_000, Math.min(lead, tail) / 4);
      Sp sharded =
          rustSpan(
              op,
              batchTrace,
              ids.span(),
              SHARDED_RS,
              NS_SHARDED,
              p.prefill ? 141 : 175,
              batchThread);
      sharded.parent = backend.spanId;
      sharded.start = Math.max(backendStart, p.start - d);
      sharded.end = p.rpcEnd + d;
      Sp client =
          rustSpan(
              op, batchTrace, ids.span(), GRPC_RS, NS_GRPC, p.prefill ? 229 : 257, batchThread);
      client.parent = sharded.spanId;
      client.start = p.start;
      client.end = p.rpcEnd;
      int size = p.prefill ? newcomers.size() : p.parts.size();
      if (p.prefill) {
        sharded.str("id", Long.toString(batchId)).str("size", Integer.toString(size));
        client.str("id", Long.toString(batchId)).str("size", Integer.toString(size));
      } else {
        sharded.str("size", Integer.toString(size));
        client.str("size", Integer.toString(size));
      }
      sharded.polled(sharded.end);
      client.polled(client.end);
      rust.add(sharded);
      rust.add(client);

      long dur = p.rpcEnd - p.start;
      long pd = Math.min(100_000, dur / 10);
      Sp server =
          pyServer(
              ids,
              batchTrace,
              client.spanId,
              p.prefill ? "Prefill" : "Decode",
              p.start + pd,
              p.rpcEnd - pd);
      py.add(server);
      long gtStart = p.start + 2 * pd;
      if (p.prefill && !outerLoop) {
        // Prefill with a cached batch: the shard concatenates it with the new one first.
        Sp concat =
            pyInternal(
                ids,
                batchTrace,
                server.spanId,
                "concatenate",
                p.start + pd + pd / 4,
                p.start + pd + pd / 2);
        py.add(concat);
      }
      py.add(
          pyInternal(ids, batchTrace, server.spanId, "generate_token", gtStart, p.rpcEnd - 2 * pd));

      // Tokens go to the HTTP side, then the batch is filtered.
      long send = Math.min(10_000, Math.max(tail / 10, 0));
      long fsStart = p.rpcEnd;
      long fsEnd = p.rpcEnd;
      for (Map.Entry<Req, Part> e : p.parts.entrySet()) {
        for (int i : e.getValue().tokens) {
          fsStart = Math.min(fsStart, e.getKey().t.tokenNs()[i]);
          fsEnd = Math.max(fsEnd, e.getKey().t.tokenNs()[i] + send);
        }
      }
      Sp fs =
          rustSpan(
              "filter_send_generations",
              batchTrace,
              ids.span(),
              BACKEND_RS,
              NS_BACKEND,
              422,
              batchThread);
      fs.parent = backend.spanId;
      fs.start = fsStart;
      fs.end = fsEnd;
      rust.add(fs.entered());

      for (Req r : newcomers) {
        r.admitted = true;
        running.add(r);
      }
      List<Req> finished = new ArrayList<>();
      for (Map.Entry<Req, Part> e : p.parts.entrySet()) {
        Req r = e.getKey();
        if (!e.getValue().tokens.isEmpty() && r.currentInfer == null) {
          throw new IllegalArgumentException(
              r.t.requestId() + ": a token before the request's first prefill chunk");
        }
        for (int i : e.getValue().tokens) {
          long t = r.t.tokenNs()[i];
          Sp sg =
              rustSpan(
                  "send_generation",
                  r.traceId,
                  ids.span(),
                  BACKEND_RS,
                  NS_BACKEND,
                  433,
                  batchThread);
          sg.parent = r.currentInfer.spanId;
          sg.start = t;
          sg.end = t + send;
          sg.str("generation", generationDebug(r, i, endpoint == Endpoint.CHAT_COMPLETIONS_STREAM));
          rust.add(sg.entered());
          r.sends.add(sg);
          if (i == r.lastToken()) {
            finished.add(r);
            r.entryDrop = Math.max(r.entryDrop, sg.end);
          }
        }
      }
      for (Req r : finished) {
        running.remove(r);
        r.currentInfer.end = r.entryDrop;
      }

      long fbStart = fsEnd;
      boolean rpc = !finished.isEmpty() && !running.isEmpty();
      long fbEnd =
          fbStart
              + (rpc ? Math.max(tail - (fsEnd - p.rpcEnd) - send, 0) : Math.min(3_000, tail / 20));
      Sp fb =
          rustSpan(
              "filter_batch", batchTrace, ids.span(), BACKEND_RS, NS_BACKEND, 388, batchThread);
      fb.parent = backend.spanId;
      fb.start = fbStart;
      fb.end = fbEnd;
      if (rpc) {
        List<Long> keep = new ArrayList<>();
        for (Req r : running) {
          keep.add((long) r.queueId);
        }
        keep.sort(null);
        long q = (fbEnd - fbStart) / 10;
        Sp sf =
            rustSpan(
                "filter_batch", batchTrace, ids.span(), SHARDED_RS, NS_SHARDED, 84, batchThread);
        sf.parent = fb.spanId;
        sf.start = fbStart + q;
        sf.end = fbEnd - q;
        sf.str("batch_id", Long.toString(cachedBatchId)).str("request_ids", keep.toString());
        Sp cf = rustSpan("filter_batch", batchTrace, ids.span(), GRPC_RS, NS_GRPC, 90, batchThread);
        cf.parent = sf.spanId;
        cf.start = sf.start + q / 2;
        cf.end = sf.end - q / 2;
        cf.str("batch_id", Long.toString(cachedBatchId)).str("request_ids", keep.toString());
        rust.add(sf.polled(sf.end));
        rust.add(cf.polled(cf.end));
        Sp fserver =
            pyServer(ids, batchTrace, cf.spanId, "FilterBatch", cf.start + q / 2, cf.end - q / 2);
        py.add(fserver);
        py.add(
            pyInternal(
                ids,
                batchTrace,
                fserver.spanId,
                "filter",
                fserver.start + q / 4,
                fserver.end - q / 4));
      }
      rust.add(fb.polled(fb.end));

      backend.end = fbEnd;
      batch.end = fbEnd;
      rust.add(backend.polled(backend.end));
      rust.add(batch.polled(batch.end));
      if (p.prefill) {
        // the prefill batch span was created inside next_batch, on the queue task
        batch.busy = Math.min(batch.busy, 2_000);
      }

      if (running.isEmpty()) {
        // The loop drains: one more next_batch finds the queue empty.
        long s = fbEnd;
        long e =
            s
                + Math.min(
                    5_000, Math.max(0, (nextStart == Long.MAX_VALUE ? 5_000 : nextStart - s) / 4));
        rust.add(nextBatchSpan(ids, s, e, true, running, batchThread));
        cachedBatchId = -1;
      }
    }
  }

  private Sp nextBatchSpan(
      Ids ids, long start, long end, boolean outer, Set<Req> running, int thread) {
    Sp nb = rustSpan("next_batch", ids.trace(), ids.span(), QUEUE_RS, NS_QUEUE, 85, thread);
    nb.start = start;
    nb.end = Math.max(start, end);
    long prefillBudget = MAX_BATCH_PREFILL_TOKENS;
    long tokenBudget = MAX_BATCH_TOTAL_TOKENS;
    if (!outer) {
      long current = running.size();
      long maxTokens = 0;
      for (Req r : running) {
        maxTokens += r.t.promptTokens() + maxNewTokens(r.t);
      }
      prefillBudget = Math.max(0, MAX_BATCH_PREFILL_TOKENS - current);
      tokenBudget = Math.max(0, MAX_BATCH_TOTAL_TOKENS - maxTokens);
    }
    nb.str("min_size", "None")
        .str("max_size", "None")
        .str("prefill_token_budget", Long.toString(prefillBudget))
        .str("token_budget", Long.toString(tokenBudget));
    return nb.polled(nb.end);
  }

  private void requestSpans(Req r, Ids ids, List<Sp> rust) {
    RequestTruth t = r.t;
    int thread = 2 + r.queueId % 16;
    long received = t.receivedNs();
    long arrival = t.arrivalNs();
    long pre = Math.max(0, arrival - received);
    boolean chat = endpoint == Endpoint.CHAT_COMPLETIONS_STREAM;
    boolean stream = endpoint != Endpoint.GENERATE;

    long startTime =
        received + (chat ? pre * 22 / 100 : pre / 100); // generate[_stream]_internal's Instant
    long handlerEnd = Math.max(t.finishNs(), r.entryDrop);

    Sp h = r.handler;
    h.parent = t.parentSpanId();
    h.start = received;
    h.end = handlerEnd;
    String params = parametersDebug(t, chat);
    if (!chat) {
      h.str("parameters", params); // parameters = ?req.parameters, recorded at creation
    }

    if (chat) {
      Sp tmpl =
          rustSpan("apply_chat_template", r.traceId, ids.span(), INFER_RS, NS_INFER, 226, thread);
      tmpl.parent = h.spanId;
      tmpl.start = received + pre * 5 / 100;
      tmpl.end = received + pre * 20 / 100;
      rust.add(tmpl.entered());
      h.str("parameters", params); // span.record("parameters", ...) after templating
    }

    String chainParent = h.spanId;
    long chainStart = startTime + pre / 100;
    Sp outerSpan = null;
    if (stream) {
      outerSpan =
          rustSpan("async_stream", r.traceId, ids.span(), SERVER_RS, NS_SERVER, 555, thread);
      outerSpan.start = chainStart;
    } else {
      outerSpan = rustSpan("generate", r.traceId, ids.span(), INFER_RS, NS_INFER, 244, thread);
      outerSpan.start = chainStart;
    }
    outerSpan.parent = chainParent;
    outerSpan.end = stream ? r.entryDrop : handlerEnd;

    Sp gs = rustSpan("generate_stream", r.traceId, ids.span(), INFER_RS, NS_INFER, 99, thread);
    gs.parent = outerSpan.spanId;
    gs.start = chainStart + pre / 100;
    gs.end = r.entryDrop;

    Sp validate =
        rustSpan("validate", r.traceId, ids.span(), VALIDATION_RS, NS_VALIDATION, 203, thread);
    validate.parent = gs.spanId;
    validate.start = gs.start + pre / 100;
    validate.end = arrival - pre / 50;
    Sp vi =
        rustSpan(
            "validate_input", r.traceId, ids.span(), VALIDATION_RS, NS_VALIDATION, 132, thread);
    vi.parent = validate.spanId;
    vi.start = validate.start + pre / 100;
    vi.end = validate.end - pre / 100;
    vi.bool("add_special_tokens", !chat)
        .str("truncate", "None")
        .str("max_new_tokens", "Some(" + maxNewTokens(t) + ")");
    Sp tok = rustSpan("tokenize", r.traceId, ids.span(), VALIDATION_RS, NS_VALIDATION, 104, thread);
    tok.parent = vi.spanId;
    tok.start = vi.start + pre / 100;
    tok.end = vi.end - pre / 50;
    tok.bool("add_special_tokens", !chat).str("truncate", "None");
    rust.add(tok.polled(tok.end));
    rust.add(vi.polled(vi.end));
    rust.add(validate.polled(validate.end));

    // BackendV3::schedule: the Entry's queue_time is stamped here; the entry keeps this span.
    long sched = t.scheduledNs();
    long hop = clamp((sched - arrival) / 10, 0, 10_000);
    Sp s = r.schedule;
    s.parent = gs.spanId;
    s.start = arrival;
    s.end = r.entryDrop;
    Sp append = rustSpan("append", r.traceId, ids.span(), QUEUE_RS, NS_QUEUE, 75, thread);
    append.parent = s.spanId;
    append.start = arrival + hop / 4;
    append.end = arrival + hop;
    rust.add(append.entered());
    s.busy = append.end - arrival;
    s.idle = 0;
    rust.add(s);
    Sp queued = rustSpan("queued", r.traceId, ids.span(), QUEUE_RS, NS_QUEUE, 228, 12);
    queued.parent = s.spanId;
    queued.start = arrival + hop / 2;
    queued.end = sched;
    rust.add(queued.neverEntered());

    rust.add(gs.polled(append.end));
    rust.add(outerSpan.polled(stream ? append.end : handlerEnd));

    // Timings recorded when the End message reaches the HTTP side (at the truth's finish).
    long finish = t.finishNs();
    long inference = finish - sched;
    h.str("total_time", rustDurationDebug(finish - startTime))
        .str("validation_time", rustDurationDebug(arrival - startTime))
        .str("queue_time", rustDurationDebug(sched - arrival))
        .str("inference_time", rustDurationDebug(inference))
        .str("time_per_token", rustDurationDebug(rustDurationDiv(inference, t.outputTokens())))
        .str("seed", seedDebug(t, chat));
    if (!stream) {
      // tracing::info!("Success") inside the instrumented handler becomes a span event.
      h.events.add(new Object[] {finish, "Success", 432});
    }
    // A streaming handler returns its Sse at once; the stream it returns is not instrumented.
    long handlerActiveEnd = stream ? startTime + pre / 200 : handlerEnd;
    rust.add(h.polled(handlerActiveEnd));
  }

  // ---------------------------------------------------------------- value rendering

  private static long maxNewTokens(RequestTruth t) {
    return "length".equalsIgnoreCase(t.finishReason())
        ? t.outputTokens()
        : Math.max(512, t.outputTokens());
  }

  /**
   * The shard reports the sampling seed only when it sampled ({@code do_sample}: chat's default).
   */
  private static String seedDebug(RequestTruth t, boolean sampled) {
    if (!sampled) {
      return "None";
    }
    long seed = new SplittableRandom(t.requestId().hashCode() * 0xC2B2AE3D27D4EB4FL).nextLong();
    return "Some(" + Long.toUnsignedString(seed) + ")";
  }

  /** {@code format!("{:?}", GenerateParameters)} as the handler sees it. */
  static String parametersDebug(RequestTruth t, boolean chat) {
    String adapter =
        chat && !t.model().isEmpty() && !t.model().equals("tgi")
            ? "Some(\"" + rustEscape(t.model()) + "\")"
            : "None";
    return "GenerateParameters { best_of: None, temperature: None, repetition_penalty: None, "
        + "frequency_penalty: None, top_k: None, top_p: None, typical_p: None, do_sample: "
        + chat
        + ", max_new_tokens: Some("
        + maxNewTokens(t)
        + "), return_full_text: None, stop: [], "
        + "truncate: None, watermark: false, details: "
        + chat
        + ", decoder_input_details: false, "
        + "seed: None, top_n_tokens: None, grammar: None, adapter_id: "
        + adapter
        + " }";
  }

  private static String rustEscape(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  private static String finishReasonDebug(String reason) {
    String r = reason == null ? "" : reason.toLowerCase();
    return switch (r) {
      case "length" -> "Length";
      case "stop_sequence" -> "StopSequence";
      default -> "EosToken";
    };
  }

  /** {@code format!("{:?}", generation)} of the v3 proto {@code Generation} (prost Debug). */
  private static String generationDebug(Req r, int i, boolean chat) {
    int id = 100 + (int) ((r.queueId * 7919L + i * 104729L) % 30000);
    String logprob =
        switch (i % 4) {
          case 0 -> "-0.25";
          case 1 -> "-0.5";
          case 2 -> "-0.125";
          default -> "-1.0";
        };
    StringBuilder b =
        new StringBuilder("Generation { request_id: ")
            .append(r.queueId)
            .append(", prefill_tokens: None, tokens: Some(Tokens { ids: [")
            .append(id)
            .append("], logprobs: [")
            .append(logprob)
            .append("], texts: [\" t")
            .append(id)
            .append("\"], is_special: [false] }), generated_text: ");
    if (i == r.lastToken()) {
      StringBuilder text = new StringBuilder();
      long[] tok = r.t.tokenNs();
      for (int k = 0; k < tok.length; k++) {
        text.append(" t").append(100 + (int) ((r.queueId * 7919L + k * 104729L) % 30000));
      }
      b.append("Some(GeneratedText { text: \"")
          .append(text)
          .append("\", generated_tokens: ")
          .append(r.t.outputTokens())
          .append(", finish_reason: ")
          .append(finishReasonDebug(r.t.finishReason()))
          .append(", seed: ")
          .append(seedDebug(r.t, chat))
          .append(" })");
    } else {
      b.append("None");
    }
    return b.append(", top_tokens: [] }").toString();
  }

  private static long clamp(long v, long lo, long hi) {
    return Math.max(lo, Math.min(hi, v));
  }

  // ---------------------------------------------------------------- span constructors

  private static Sp rustSpan(
      String name, String traceId, String spanId, String file, String ns, int line, int threadId) {
    Sp s = new Sp(name, traceId, spanId, false, null);
    s.str("code.filepath", file)
        .str("code.namespace", ns)
        .i64("code.lineno", line)
        .i64("thread.id", threadId)
        .str("thread.name", THREAD_NAME);
    return s;
  }

  private static Sp pyServer(
      Ids ids, String traceId, String parent, String method, long start, long end) {
    Sp s = new Sp("/" + GRPC_SERVICE + "/" + method, traceId, ids.span(), true, PY_SCOPE_GRPC);
    s.kind = 2; // SPAN_KIND_SERVER
    s.parent = parent;
    s.flags = 0x300; // parent is remote (the router's client span)
    s.start = start;
    s.end = Math.max(start, end);
    s.str("rpc.system", "grpc")
        .i64("rpc.grpc.status_code", 0)
        .str("rpc.method", method)
        .str("rpc.service", GRPC_SERVICE)
        .str("rpc.user_agent", "tonic/0.10.2")
        .str("net.transport", "unix");
    return s;
  }

  private static Sp pyInternal(
      Ids ids, String traceId, String parent, String name, long start, long end) {
    Sp s = new Sp(name, traceId, ids.span(), true, PY_SCOPE_MODEL);
    s.parent = parent;
    s.flags = 0x100;
    s.start = start;
    s.end = Math.max(start, end);
    return s;
  }

  // ---------------------------------------------------------------- OTLP/JSON

  private static ObjectNode spanJson(Sp s) {
    ObjectNode o = JSON.createObjectNode();
    o.put("traceId", s.traceId);
    o.put("spanId", s.spanId);
    if (!s.parent.isEmpty()) {
      o.put("parentSpanId", s.parent);
    }
    if (s.python) {
      o.put("flags", s.flags);
    }
    o.put("name", s.name);
    o.put("kind", s.kind);
    o.put("startTimeUnixNano", Long.toString(s.start));
    o.put("endTimeUnixNano", Long.toString(Math.max(s.start, s.end)));
    ArrayNode attrs = o.putArray("attributes");
    for (Object[] a : s.attrs) {
      attrs.add(kv((String) a[0], a[1]));
    }
    if (!s.python && s.busy >= 0) {
      attrs.add(kv("busy_ns", s.busy));
      attrs.add(kv("idle_ns", s.idle));
    }
    if (attrs.isEmpty()) {
      o.remove("attributes");
    }
    if (!s.events.isEmpty()) {
      ArrayNode evs = o.putArray("events");
      for (Object[] e : s.events) {
        ObjectNode ev = evs.addObject();
        ev.put("timeUnixNano", Long.toString((Long) e[0]));
        ev.put("name", (String) e[1]);
        ArrayNode ea = ev.putArray("attributes");
        ea.add(kv("level", "INFO"));
        ea.add(kv("target", NS_SERVER));
        ea.add(kv("code.filepath", SERVER_RS));
        ea.add(kv("code.namespace", NS_SERVER));
        ea.add(kv("code.lineno", (long) (Integer) e[2]));
      }
    }
    if (!s.links.isEmpty()) {
      ArrayNode ls = o.putArray("links");
      for (String[] l : s.links) {
        ObjectNode lo = ls.addObject();
        lo.put("traceId", l[0]);
        lo.put("spanId", l[1]);
      }
    }
    o.putObject("status"); // Status { code: UNSET, message: "" }
    return o;
  }

  private static ObjectNode kv(String key, Object value) {
    ObjectNode o = JSON.createObjectNode();
    o.put("key", key);
    ObjectNode v = o.putObject("value");
    if (value instanceof String sv) {
      v.put("stringValue", sv);
    } else if (value instanceof Long lv) {
      v.put("intValue", Long.toString(lv));
    } else if (value instanceof Integer iv) {
      v.put("intValue", Integer.toString(iv));
    } else if (value instanceof Boolean bv) {
      v.put("boolValue", bv);
    } else if (value instanceof Double dv) {
      v.put("doubleValue", dv);
    } else {
      throw new IllegalArgumentException("attribute " + key + ": " + value);
    }
    return o;
  }

  /** opentelemetry-otlp 0.13 turns every span into a ResourceSpans of its own. */
  private static String rustDocument(List<Sp> spans) {
    ObjectNode root = JSON.createObjectNode();
    ArrayNode rss = root.putArray("resourceSpans");
    for (Sp s : spans) {
      ObjectNode rs = rss.addObject();
      rs.putObject("resource").putArray("attributes").add(kv("service.name", SERVICE_NAME));
      ObjectNode ss = rs.putArray("scopeSpans").addObject();
      ObjectNode scope = ss.putObject("scope");
      scope.put("name", RUST_SCOPE);
      scope.put("version", RUST_SCOPE_VERSION);
      ss.putArray("spans").add(spanJson(s));
      ss.put("schemaUrl", RUST_SCOPE_SCHEMA);
    }
    return toJson(root);
  }

  /** opentelemetry-python groups by resource, then by instrumentation scope. */
  private static String pythonDocument(List<Sp> spans) {
    ObjectNode root = JSON.createObjectNode();
    ObjectNode rs = root.putArray("resourceSpans").addObject();
    ArrayNode ra = rs.putObject("resource").putArray("attributes");
    ra.add(kv("telemetry.sdk.language", "python"));
    ra.add(kv("telemetry.sdk.name", "opentelemetry"));
    ra.add(kv("telemetry.sdk.version", PY_SDK_VERSION));
    ra.add(kv("service.name", SERVICE_NAME));
    Map<String, ArrayNode> byScope = new LinkedHashMap<>();
    ArrayNode scopes = rs.putArray("scopeSpans");
    for (Sp s : spans) {
      ArrayNode arr =
          byScope.computeIfAbsent(
              s.pyScope,
              name -> {
                ObjectNode ss = scopes.addObject();
                ss.putObject("scope").put("name", name);
                return ss.putArray("spans");
              });
      arr.add(spanJson(s));
    }
    return toJson(root);
  }

  private static String toJson(ObjectNode n) {
    try {
      return JSON.writeValueAsString(n);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
