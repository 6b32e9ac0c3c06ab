package dev.llmlat.analyze;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Splits a request's TTFT into contiguous components that sum exactly to it. The timeline from
 * the gateway's server span start (or the engine's arrival, without a gateway layer) to the first
 * content chunk written (or the first token) is cut at every span boundary; each piece goes to
 * the highest-priority explanation covering it (engine step > queue > first sample > prefill
 * gaps > gateway/network), and pieces nothing explains are {@code unattributed}. Step pieces are
 * then split by the step's GPU busy time into prefill CPU/launch, the request's own GPU share (by
 * tokens) and batch interference (the other requests' tokens).
 */
final class TtftAttributor {
  private static final int P_UNATTRIBUTED = 0;
  private static final int P_EDGE = 1; // gateway_in, network_in, network_out
  private static final int P_PREFILL_GAP = 2;
  private static final int P_FIRST_SAMPLE = 3;
  private static final int P_QUEUE = 4;
  private static final int P_STEP = 5;

  private record Labeled(String label, String span, long start, long end, int priority) {}

  /** What a step contributes: its interval, GPU busy time, and the request's share of its tokens. */
  private record Step(String id, String span, long start, long end, long busyNs, double ownShare, boolean gpuMeasured) {}

  private TtftAttributor() {}

  static Attribution attribute(RequestView v, RequestView.Index index, List<ClockCorrection> corrections) {
    SpanRecord e = v.engine();
    List<String> notes = new ArrayList<>();
    long firstToken = firstToken(v, notes);
    List<Attribution.Gap> itl = ItlAnalyzer.gaps(v, index, firstToken);
    boolean gateway = v.gatewayServer() != null;
    long t0 = gateway ? v.gatewayServer().startNs() : e.startNs();
    long tEnd = firstToken;
    if (gateway) {
      long chunk = gatewayFirstChunk(v.gatewayServer());
      if (chunk > 0) {
        tEnd = chunk;
      } else {
        notes.add("the gateway recorded no first-chunk time: TTFT ends at the engine's first token");
      }
    }
    if (tEnd < t0) {
      notes.add("first token precedes the request start after clock alignment; TTFT taken as 0");
      tEnd = t0;
    }
    List<Labeled> labels = new ArrayList<>();
    if (gateway && v.gatewayClient() != null) {
      labels.add(new Labeled("gateway_in", v.gatewayServer().name(), t0, v.gatewayClient().startNs(), P_EDGE));
      labels.add(new Labeled("network_in", v.gatewayClient().name(), v.gatewayClient().startNs(), e.startNs(), P_EDGE));
    }
    long firstScheduled = firstScheduled(v, e, index, firstToken);
    labels.add(new Labeled("queue", "queue", e.startNs(), firstScheduled, P_QUEUE));
    for (SpanRecord q : v.queues()) {
      labels.add(new Labeled("queue", q.name(), q.startNs(), Math.min(q.endNs(), firstToken), P_QUEUE));
    }
    List<Step> steps = steps(v, index, firstScheduled, firstToken, notes);
    long lastStepEnd = firstScheduled;
    for (Step s : steps) {
      labels.add(new Labeled("step:" + s.id(), s.span(), s.start(), Math.min(s.end(), firstToken), P_STEP));
      lastStepEnd = Math.max(lastStepEnd, Math.min(s.end(), firstToken));
    }
    labels.add(new Labeled("prefill_cpu", "prefill", firstScheduled, lastStepEnd, P_PREFILL_GAP));
    labels.add(new Labeled("first_sample", "llm_request", lastStepEnd, firstToken, P_FIRST_SAMPLE));
    if (gateway) {
      labels.add(new Labeled("network_out", v.gatewayServer().name(), firstToken, tEnd, P_EDGE));
    }

    // Sweep the elementary pieces of [t0, tEnd).
    TreeSet<Long> cuts = new TreeSet<>();
    cuts.add(t0);
    cuts.add(tEnd);
    for (Labeled l : labels) {
      if (l.end() > l.start()) {
        cuts.add(clamp(l.start(), t0, tEnd));
        cuts.add(clamp(l.end(), t0, tEnd));
      }
    }
    Map<String, Long> raw = new LinkedHashMap<>();
    List<Attribution.Segment> path = new ArrayList<>();
    Long previous = null;
    for (long cut : cuts) {
      if (previous != null && cut > previous) {
        Labeled best = null;
        for (Labeled l : labels) {
          if (l.start() <= previous && l.end() >= cut && (best == null || l.priority() > best.priority())) {
            best = l;
          }
        }
        String label = best == null ? "unattributed" : best.label();
        raw.merge(label, cut - previous, Long::sum);
        String span = best == null ? "" : best.span();
        Attribution.Segment last = path.isEmpty() ? null : path.get(path.size() - 1);
        String component = label.startsWith("step:") ? "step" : label;
        if (last != null && last.component().equals(component) && last.span().equals(span) && last.endNs() == previous) {
          path.set(path.size() - 1, new Attribution.Segment(component, span, last.startNs(), cut));
        } else {
          path.add(new Attribution.Segment(component, span, previous, cut));
        }
      }
      previous = cut;
    }

    Map<String, Long> components = new LinkedHashMap<>();
    for (String c : Attribution.COMPONENTS) {
      components.put(c, 0L);
    }
    for (Map.Entry<String, Long> r : raw.entrySet()) {
      if (r.getKey().startsWith("step:")) {
        Step s = steps.stream().filter(x -> ("step:" + x.id()).equals(r.getKey())).findFirst().orElseThrow();
        long covered = r.getValue();
        long duration = Math.max(1, s.end() - s.start());
        // a GPU step can outlast its CPU step span (kernels run after the launches): busy never exceeds the piece
        long busy = Math.min(covered, Math.round(s.busyNs() * (covered / (double) duration)));
        long own = Math.round(busy * s.ownShare());
        components.merge("prefill_cpu", covered - busy, Long::sum);
        components.merge("prefill_gpu", own, Long::sum);
        components.merge("batch_interference", busy - own, Long::sum);
      } else {
        components.merge(r.getKey(), r.getValue(), Long::sum);
      }
    }
    List<SpanRecord> preemptions = new ArrayList<>();
    for (SpanRecord.Event ev : e.events()) {
      if (LayerNames.EVENT_PREEMPTED.equals(ev.name())) {
        preemptions.add(e);
      }
    }
    return new Attribution(v.traceId(), e.attr("gen_ai.request.id"), model(e), e.service(), e.clockDomain(), e.startNs(),
        gateway ? LayerNames.GATEWAY : LayerNames.ENGINE, tEnd - t0, components, path, itl, corrections,
        e.longAttr("gen_ai.usage.input_tokens", e.longAttr("gen_ai.usage.prompt_tokens", 0)),
        e.longAttr("gen_ai.usage.output_tokens", e.longAttr("gen_ai.usage.completion_tokens", 0)),
        v.prefills().size(), preemptions.size(), notes);
  }

  static String model(SpanRecord e) {
    String m = e.attr("gen_ai.response.model");
    return m.isEmpty() ? e.attr("gen_ai.request.model") : m;
  }

  /** The first token: the SDK's event, else the end of the last prefill, else vLLM's latency attribute. */
  static long firstToken(RequestView v, List<String> notes) {
    SpanRecord e = v.engine();
    SpanRecord.Event ev = e.event(LayerNames.EVENT_FIRST_TOKEN);
    if (ev != null) {
      return ev.timeNs();
    }
    if (v.decode() != null) {
      return v.decode().startNs();
    }
    if (!v.prefills().isEmpty()) {
      return v.prefills().get(v.prefills().size() - 1).endNs();
    }
    double ttft = e.doubleAttr("gen_ai.latency.time_to_first_token", -1);
    if (ttft >= 0) {
      notes.add("engine breakdown from vLLM's gen_ai.latency.* attributes");
      return e.startNs() + Math.round(ttft * 1e9);
    }
    notes.add("no first-token time in the engine layer: TTFT ends at the request's end");
    return e.endNs();
  }

  static long firstScheduled(RequestView v, SpanRecord e, RequestView.Index index, long firstToken) {
    if (!v.prefills().isEmpty()) {
      return v.prefills().get(0).startNs();
    }
    if (!v.queues().isEmpty()) {
      return v.queues().get(0).endNs();
    }
    double queue = e.doubleAttr("gen_ai.latency.time_in_queue", -1);
    if (queue >= 0) {
      return e.startNs() + Math.round(queue * 1e9);
    }
    // An engine without the SDK: it waited until the GPU started the first step that served it.
    for (SpanRecord g : index.gpuStepsByTrace.getOrDefault(v.traceId(), List.of())) {
      if (g.startNs() >= e.startNs() && g.startNs() < firstToken) {
        return g.startNs();
      }
    }
    return e.startNs();
  }

  static long gatewayFirstChunk(SpanRecord server) {
    SpanRecord.Event ev = server.event(LlmlatAttributes.EVENT_FIRST_CHUNK);
    if (ev != null) {
      return ev.timeNs();
    }
    return server.longAttr(LlmlatAttributes.GATEWAY_FIRST_CHUNK_NS, 0);
  }

  /** The steps that did this request's prefill, with their GPU busy time and the request's token share. */
  private static List<Step> steps(RequestView v, RequestView.Index index, long from, long firstToken, List<String> notes) {
    List<Step> steps = new ArrayList<>();
    boolean anyGpu = false;
    for (SpanRecord p : v.prefills()) {
      String stepId = p.attr(LlmlatAttributes.STEP_SPAN_ID);
      SpanRecord step = v.engineSteps().get(stepId);
      SpanRecord gpu = v.gpuSteps().get(stepId);
      SpanRecord interval = step != null ? step : p;
      long ownTokens = p.longAttr(LayerNames.PREFILL_TOKENS, 0);
      long total = step == null ? 0
          : step.longAttr(LlmlatAttributes.STEP_PREFILL_TOKENS, 0) + step.longAttr(LlmlatAttributes.STEP_DECODE_TOKENS, 0);
      double share = total > 0 && ownTokens > 0 ? Math.min(1.0, ownTokens / (double) total)
          : step != null ? 1.0 / Math.max(1, step.longAttr(LlmlatAttributes.STEP_BATCH_SIZE, 1)) : 1.0;
      long busy = gpu != null ? gpu.longAttr(LlmlatAttributes.GPU_BUSY_NS, gpu.durationNs()) : interval.durationNs();
      anyGpu |= gpu != null;
      steps.add(new Step(stepId.isEmpty() ? p.spanId() : stepId, interval.name(), interval.startNs(), interval.endNs(),
          busy, share, gpu != null));
    }
    if (steps.isEmpty()) {
      // No engine step spans (e.g. an engine without the SDK): GPU steps that name this trace.
      for (SpanRecord g : index.gpuStepsByTrace.getOrDefault(v.traceId(), List.of())) {
        if (g.startNs() >= from && g.startNs() < firstToken) {
          List<String> served = index.served(g);
          String kind = g.attr(LlmlatAttributes.STEP_KIND);
          double share = "prefill".equals(kind) || served.size() <= 1 ? 1.0 : 1.0 / served.size();
          steps.add(new Step(g.spanId(), "gpu step", g.startNs(), g.endNs(), g.longAttr(LlmlatAttributes.GPU_BUSY_NS, g.durationNs()),
              share, true));
          anyGpu = true;
        }
      }
    }
    if (!steps.isEmpty() && !anyGpu) {
      notes.add("no GPU layer for this request: engine step time is counted as GPU time");
    }
    return steps;
  }

  private static long clamp(long v, long lo, long hi) {
    return Math.max(lo, Math.min(hi, v));
  }
}
