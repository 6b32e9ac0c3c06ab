package dev.llmlat.analyze;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** One request's spans across the layers, found by trace id, parentage and step links. */
record RequestView(
    String traceId,
    SpanRecord engine,
    SpanRecord gatewayServer,
    SpanRecord gatewayClient,
    List<SpanRecord> queues,
    List<SpanRecord> prefills,
    SpanRecord decode,
    Map<String, SpanRecord> engineSteps,
    Map<String, SpanRecord> gpuSteps) {

  /** Index of the loaded spans: by trace, by id, and the step spans. */
  static final class Index {
    final Map<String, List<SpanRecord>> byTrace = new HashMap<>();
    final List<SpanRecord> engineSteps = new ArrayList<>();
    final Map<String, SpanRecord> engineStepsById = new HashMap<>();
    final Map<String, SpanRecord> gpuStepsByEngineStep = new HashMap<>();
    final List<SpanRecord> gpuSteps = new ArrayList<>();
    /** GPU steps by the request traces they served, in start order. */
    final Map<String, List<SpanRecord>> gpuStepsByTrace = new HashMap<>();
    /** The request traces each step served ({@code llmlat.trace_ids}, parsed once). */
    final Map<SpanRecord, List<String>> served = new java.util.IdentityHashMap<>();
    /** The engine request spans, in start order. */
    private final List<SpanRecord> requests = new ArrayList<>();
    long longestEngineStepNs;
    long longestGpuStepNs;

    Index(List<SpanRecord> spans) {
      for (SpanRecord s : spans) {
        byTrace.computeIfAbsent(s.traceId(), k -> new ArrayList<>(8)).add(s);
        if (LayerNames.REQUEST.equals(s.name())) {
          requests.add(s);
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
        }
      }
      requests.sort(Comparator.comparingLong(SpanRecord::startNs));
      engineSteps.sort(Comparator.comparingLong(SpanRecord::startNs));
      gpuSteps.sort(Comparator.comparingLong(SpanRecord::startNs));
      for (SpanRecord s : engineSteps) {
        served.put(s, s.arrayAttr(dev.llmlat.semconv.LlmlatAttributes.TRACE_IDS));
        longestEngineStepNs = Math.max(longestEngineStepNs, s.durationNs());
      }
      for (SpanRecord g : gpuSteps) {
        List<String> traces = g.arrayAttr(dev.llmlat.semconv.LlmlatAttributes.TRACE_IDS);
        served.put(g, traces);
        longestGpuStepNs = Math.max(longestGpuStepNs, g.durationNs());
        for (String t : traces) {
          gpuStepsByTrace.computeIfAbsent(t, k -> new ArrayList<>()).add(g);
        }
      }
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

    /** Every engine request span loaded, in start order. */
    List<SpanRecord> requests() {
      return requests;
    }

    RequestView view(SpanRecord engine) {
      List<SpanRecord> trace = byTrace.getOrDefault(engine.traceId(), List.of());
      SpanRecord client = engine.parentSpanId().isEmpty() ? null : find(trace, engine.parentSpanId());
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
          if (LayerNames.GATEWAY.equals(s.layer()) && "Server".equals(s.kind()) && s.startNs() <= engine.startNs()) {
            server = s;
            break;
          }
        }
      }
      List<SpanRecord> queues = new ArrayList<>();
      List<SpanRecord> prefills = new ArrayList<>();
      SpanRecord decode = null;
      for (SpanRecord s : trace) {
        if (!s.parentSpanId().equals(engine.spanId())) {
          continue;
        }
        switch (s.name()) {
          case LayerNames.QUEUE -> queues.add(s);
          case LayerNames.PREFILL -> prefills.add(s);
          case LayerNames.DECODE -> decode = s;
          default -> { }
        }
      }
      queues.sort(Comparator.comparingLong(SpanRecord::startNs));
      prefills.sort(Comparator.comparingLong(SpanRecord::startNs));
      Map<String, SpanRecord> steps = new HashMap<>();
      Map<String, SpanRecord> gpu = new HashMap<>();
      for (SpanRecord p : prefills) {
        String stepId = p.attr(LlmlatAttributes.STEP_SPAN_ID);
        SpanRecord step = engineStepsById.get(stepId);
        if (step != null) {
          steps.put(stepId, step);
        }
        SpanRecord g = gpuStepsByEngineStep.get(stepId);
        if (g != null) {
          gpu.put(stepId, g);
        }
      }
      return new RequestView(engine.traceId(), engine, server, client, queues, prefills, decode, steps, gpu);
    }
  }
}
