package dev.llmlat.attribution;

import dev.llmlat.attribution.engines.EngineAdapter;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.attribution.engines.EngineRequest;
import dev.llmlat.attribution.engines.TraceContext;
import dev.llmlat.attribution.engines.UnknownEngine;
import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One request's spans across the layers, found by trace id, parentage and step links: the engine
 * request, the gateway's SERVER span and its upstream CLIENT span, and the client layer's span (a
 * load generator's request, the trace's root) when the trace has one.
 */
record RequestView(
    String traceId,
    EngineRequest request,
    SpanRecord gatewayServer,
    SpanRecord gatewayClient,
    SpanRecord client,
    Map<String, SpanRecord> engineSteps,
    Map<String, SpanRecord> gpuSteps,
    DisaggregatedView disaggregated) {

  /**
   * The two instances of a disaggregated request: the prefill instance's request (null when its
   * spans are missing), the gateway's call to it, and how the instances were told apart.
   */
  record DisaggregatedView(Disaggregation pair, EngineRequest prefill, SpanRecord prefillClient) {}

  SpanRecord engine() {
    return request.span();
  }

  /** Index of the loaded spans: by trace, by id, by link target, and the step spans. */
  static final class Index {
    final Map<String, List<SpanRecord>> byTrace = new HashMap<>();

    /** Spans with links, by the trace (and trace + span) they link to. */
    final Map<String, List<SpanRecord>> byLinkTarget = new HashMap<>();

    final List<SpanRecord> engineSteps = new ArrayList<>();
    final Map<String, SpanRecord> engineStepsById = new HashMap<>();
    final Map<String, SpanRecord> gpuStepsByEngineStep = new HashMap<>();
    final List<SpanRecord> gpuSteps = new ArrayList<>();

    /** GPU steps by the request traces they served, in start order. */
    final Map<String, List<SpanRecord>> gpuStepsByTrace = new HashMap<>();

    /**
     * Collective kernels of GPU steps (tensor parallelism), by the step span that launched them.
     */
    final Map<String, List<SpanRecord>> collectivesByStep = new HashMap<>();

    /**
     * GPU steps that several ranks ran, each rank's copy mapped to the step's wait for a late rank.
     */
    final Map<SpanRecord, RankWaits.StepWait> rankWaits;

    /** The request traces each step served ({@code llmlat.trace_ids}, parsed once). */
    final Map<SpanRecord, List<String>> served = new java.util.IdentityHashMap<>();

    /**
     * The engine request spans (or stand-ins for unknown engines), in start order, with their
     * adapter.
     */
    private final List<SpanRecord> requests = new ArrayList<>();

    private final Map<SpanRecord, EngineAdapter> adapters = new java.util.IdentityHashMap<>();

    /**
     * Disaggregated requests by the request span that stands for them (the decode side's where
     * present).
     */
    private final Map<SpanRecord, Disaggregation> disaggregated = new java.util.IdentityHashMap<>();

    long longestEngineStepNs;
    long longestGpuStepNs;

    /** Every instance's steps by time, for the queue breakdown. */
    final StepIndex stepIndex;

    /** Whether each request's queue is split by what the engine did meanwhile. */
    final boolean queueBreakdown;

    /**
     * The attribute that names a request's tenant ({@link LlmlatAttributes#TENANT} unless told
     * otherwise).
     */
    final String tenantKey;

    private final Map<String, String> tenants = new java.util.concurrent.ConcurrentHashMap<>();

    Index(List<SpanRecord> spans) {
      this(spans, LlmlatAttributes.TENANT);
    }

    Index(List<SpanRecord> spans, String tenantKey) {
      this(spans, tenantKey, true);
    }

    /**
     * With {@code queueBreakdown} false no time index of the steps is built (a benchmark's
     * baseline).
     */
    Index(List<SpanRecord> spans, String tenantKey, boolean queueBreakdown) {
      this.tenantKey = tenantKey;
      this.queueBreakdown = queueBreakdown;
      for (SpanRecord s : spans) {
        if (isCollectiveKernel(s)) {
          // a kernel, not a span of its request's trace: kept by step only
          collectivesByStep.computeIfAbsent(s.parentSpanId(), k -> new ArrayList<>()).add(s);
          continue;
        }
        byTrace.computeIfAbsent(s.traceId(), k -> new ArrayList<>(8)).add(s);
        EngineAdapter adapter = EngineAdapters.forRequest(s);
        if (adapter != null) {
          requests.add(s);
          adapters.put(s, adapter);
        } else if (LayerNames.STEP.equals(s.name())) {
          if (LayerNames.GPU.equals(s.layer())) {
            gpuSteps.add(s);
            String engineStep = s.attr(LlmlatAttributes.STEP_SPAN_ID);
            if (!engineStep.isEmpty()) {
              gpuStepsByEngineStep.put(engineStep, s);
            }
          } else {
            engineSteps.add(s);
            engineStepsById.put(s.spanId(), s);
          }
        } else if (!s.links().isEmpty() && !LayerNames.GPU.equals(s.layer())) {
          for (SpanRecord.Link l : s.links()) {
            byLinkTarget.computeIfAbsent(l.traceId(), k -> new ArrayList<>()).add(s);
            byLinkTarget.computeIfAbsent(l.traceId() + l.spanId(), k -> new ArrayList<>()).add(s);
          }
        }
      }
      // traces with a gateway request but no engine convention we know: still attributed
      java.util.Set<String> known = new java.util.HashSet<>();
      requests.forEach(r -> known.add(r.traceId()));
      for (Map.Entry<String, List<SpanRecord>> t : byTrace.entrySet()) {
        if (!known.contains(t.getKey())
            && t.getValue().stream().anyMatch(UnknownEngine::isGatewayServer)) {
          SpanRecord standIn = UnknownEngine.standIn(context(t.getKey()));
          if (standIn != null) {
            requests.add(standIn);
          }
        }
      }
      joinInstances();
      requests.sort(Comparator.comparingLong(SpanRecord::startNs));
      engineSteps.sort(Comparator.comparingLong(SpanRecord::startNs));
      gpuSteps.sort(Comparator.comparingLong(SpanRecord::startNs));
      for (SpanRecord s : engineSteps) {
        served.put(s, s.arrayAttr(LlmlatAttributes.TRACE_IDS));
        longestEngineStepNs = Math.max(longestEngineStepNs, s.durationNs());
      }
      for (SpanRecord g : gpuSteps) {
        List<String> traces = g.arrayAttr(LlmlatAttributes.TRACE_IDS);
        if (traces.isEmpty()) {
          traces = g.links().stream().map(SpanRecord.Link::traceId).distinct().toList();
        }
        served.put(g, traces);
        longestGpuStepNs = Math.max(longestGpuStepNs, g.durationNs());
        for (String t : traces) {
          gpuStepsByTrace.computeIfAbsent(t, k -> new ArrayList<>()).add(g);
        }
      }
      rankWaits = RankWaits.of(gpuSteps, collectivesByStep, served);
      List<SpanRecord> sides = new ArrayList<>(requests);
      disaggregated.values().stream()
          .filter(Disaggregation::complete)
          .forEach(d -> sides.add(d.prefill()));
      stepIndex = queueBreakdown ? StepIndex.build(this, sides) : null;
    }

    /**
     * The tenant of a request's trace: the first of its spans that names one, "" when none does.
     */
    String tenantOf(String traceId) {
      return tenants.computeIfAbsent(
          traceId,
          t -> {
            for (SpanRecord s : byTrace.getOrDefault(t, List.of())) {
              String v = s.attr(tenantKey);
              if (!v.isEmpty()) {
                return v;
              }
            }
            return "";
          });
    }

    /**
     * A collective kernel under a GPU step (the store reads those of {@code gpu_kernels} as spans).
     */
    static boolean isCollectiveKernel(SpanRecord s) {
      return LayerNames.GPU.equals(s.layer())
          && !s.parentSpanId().isEmpty()
          && "kernel".equals(s.attr(LlmlatAttributes.GPU_KIND))
          && dev.llmlat.semconv.CollectiveKernels.matches(s.name());
    }

    /**
     * One request, several instances: a trace's request spans of a prefill and a decode instance
     * become one request, read from the decode side (the client's first token is its), the prefill
     * side joined.
     */
    private void joinInstances() {
      Map<String, List<SpanRecord>> byTraceRequests = new HashMap<>();
      for (SpanRecord r : requests) {
        if (adapters.containsKey(r)) {
          byTraceRequests.computeIfAbsent(r.traceId(), k -> new ArrayList<>(2)).add(r);
        }
      }
      java.util.Set<SpanRecord> joined =
          java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
      for (Map.Entry<String, List<SpanRecord>> t : byTraceRequests.entrySet()) {
        Disaggregation d =
            Disaggregation.of(
                t.getValue(), byTrace.getOrDefault(t.getKey(), List.of()), adapters::get);
        if (d == null) {
          continue;
        }
        disaggregated.put(d.primary(), d);
        if (d.complete()) {
          joined.add(d.prefill());
        }
      }
      requests.removeIf(joined::contains);
    }

    /**
     * Traces up to this many spans are scanned for a span's children: cheaper than a map made for
     * one or two calls.
     */
    private static final int SCANNED_TRACE = 16;

    /** What an adapter sees of one trace. */
    TraceContext context(String traceId) {
      List<SpanRecord> trace = byTrace.getOrDefault(traceId, List.of());
      return new TraceContext() {
        /** Spans by parent id, made at the first call: adapters walk a trace's tree many times. */
        private Map<String, List<SpanRecord>> byParent;

        @Override
        public List<SpanRecord> trace() {
          return trace;
        }

        @Override
        public List<SpanRecord> children(SpanRecord span) {
          if (trace.size() <= SCANNED_TRACE) {
            List<SpanRecord> out = List.of();
            for (SpanRecord s : trace) {
              if (s.parentSpanId().equals(span.spanId())) {
                if (out.isEmpty()) {
                  out = new ArrayList<>(4);
                }
                out.add(s);
              }
            }
            return out;
          }
          if (byParent == null) {
            byParent = new HashMap<>();
            for (SpanRecord s : trace) {
              byParent.computeIfAbsent(s.parentSpanId(), k -> new ArrayList<>(4)).add(s);
            }
          }
          return byParent.getOrDefault(span.spanId(), List.of());
        }

        @Override
        public List<SpanRecord> linking(SpanRecord span) {
          List<SpanRecord> out =
              new ArrayList<>(byLinkTarget.getOrDefault(span.traceId() + span.spanId(), List.of()));
          for (SpanRecord s : byLinkTarget.getOrDefault(span.traceId(), List.of())) {
            if (!out.contains(s)
                && s.links().stream()
                    .anyMatch(
                        l ->
                            l.traceId().equals(span.traceId())
                                && (l.spanId().isEmpty()
                                    || l.spanId().chars().allMatch(c -> c == '0')))) {
              out.add(s);
            }
          }
          return out;
        }
      };
    }

    /** A span of a (small) trace by id: a scan beats a global map of every span. */
    static SpanRecord find(List<SpanRecord> trace, String spanId) {
      for (SpanRecord s : trace) {
        if (s.spanId().equals(spanId)) {
          return s;
        }
      }
      return null;
    }

    List<String> served(SpanRecord step) {
      return served.getOrDefault(step, List.of());
    }

    /** Steps (sorted by start) that overlap (from, to): a binary search, not a scan. */
    static List<SpanRecord> overlapping(List<SpanRecord> sorted, long longest, long from, long to) {
      int lo = 0;
      int hi = sorted.size();
      long earliest = from - longest;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (sorted.get(mid).startNs() < earliest) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      List<SpanRecord> out = new ArrayList<>();
      for (int i = lo; i < sorted.size() && sorted.get(i).startNs() < to; i++) {
        if (sorted.get(i).endNs() > from) {
          out.add(sorted.get(i));
        }
      }
      return out;
    }

    /** Every engine request span loaded (or the stand-in of an unknown engine), in start order. */
    List<SpanRecord> requests() {
      return requests;
    }

    RequestView view(SpanRecord engineSpan) {
      TraceContext context = context(engineSpan.traceId());
      EngineAdapter adapter = adapters.get(engineSpan);
      EngineRequest request =
          adapter != null
              ? adapter.read(engineSpan, context)
              : UnknownEngine.read(engineSpan, context);
      List<SpanRecord> trace = context.trace();
      SpanRecord engine = request.span();
      SpanRecord client =
          engine.parentSpanId().isEmpty() ? null : find(trace, engine.parentSpanId());
      if ("Client".equals(engine.kind()) && adapter == null) {
        client = engine; // an unknown engine without spans: the upstream call stands for it
      }
      SpanRecord server = null;
      if (client != null && "Client".equals(client.kind())) {
        SpanRecord up = client;
        while (up != null && !up.parentSpanId().isEmpty()) {
          up = find(trace, up.parentSpanId());
          if (up != null && "Server".equals(up.kind()) && !LayerNames.ENGINE.equals(up.layer())) {
            server = up;
            break;
          }
        }
      } else {
        client = null;
      }
      if (server == null) {
        // The upstream call's span is missing (not exported, or sampled out): the trace's gateway
        // server span still starts the TTFT, and the unknown stretch stays unattributed.
        for (SpanRecord s : trace) {
          if (UnknownEngine.isGatewayServer(s) && s.startNs() <= request.arrivalNs()) {
            server = s;
            break;
          }
        }
      }
      Map<String, SpanRecord> steps = new HashMap<>();
      Map<String, SpanRecord> gpu = new HashMap<>();
      Disaggregation pair = disaggregated.get(engineSpan);
      DisaggregatedView pd = null;
      List<EngineRequest.Prefill> passes = new ArrayList<>(request.prefills());
      if (pair != null) {
        EngineRequest prefill = null;
        SpanRecord prefillClient = null;
        if (pair.complete()) {
          prefill = adapters.get(pair.prefill()).read(pair.prefill(), context);
          passes.addAll(prefill.prefills());
          SpanRecord up =
              pair.prefill().parentSpanId().isEmpty()
                  ? null
                  : find(trace, pair.prefill().parentSpanId());
          prefillClient = up != null && "Client".equals(up.kind()) ? up : null;
        }
        pd = new DisaggregatedView(pair, prefill, prefillClient);
      }
      for (EngineRequest.Prefill p : passes) {
        String stepId = p.stepSpanId();
        if (stepId.isEmpty()) {
          continue;
        }
        SpanRecord step = engineStepsById.get(stepId);
        if (step != null) {
          steps.put(stepId, step);
        }
        SpanRecord g = gpuStepsByEngineStep.get(stepId);
        if (g != null) {
          gpu.put(stepId, g);
        }
      }
      return new RequestView(
          engine.traceId(),
          request,
          server,
          client,
          clientLayer(trace, server != null ? server : engine),
          steps,
          gpu,
          pd);
    }

    /**
     * The client layer's span that called {@code callee} (the gateway, or the engine directly), or
     * null.
     */
    private static SpanRecord clientLayer(List<SpanRecord> trace, SpanRecord callee) {
      if (callee.parentSpanId().isEmpty()) {
        return null;
      }
      SpanRecord parent = find(trace, callee.parentSpanId());
      return parent != null && LayerNames.CLIENT.equals(parent.layer()) ? parent : null;
    }
  }
}
