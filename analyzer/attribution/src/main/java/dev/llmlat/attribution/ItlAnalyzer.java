package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A request's inter-token latencies from its decode span's token times, and a named cause for
 * every gap that stands out from the request's own median (by 50% and at least 1 ms): a
 * preemption, a late rank its decode step waited for (tensor parallelism), another request's prefill
 * running on the same engine, the batch growing, or a slow step.
 */
final class ItlAnalyzer {
  static final double MARGIN = 1.5;
  static final long MIN_EXCESS_NS = 1_000_000;

  private ItlAnalyzer() {}

  /** Token times: the first token, then every decode token. */
  static long[] tokenTimes(RequestView v, long firstToken) {
    long[] decode = v.request().decodeTokenNs();
    long[] times = new long[decode.length + 1];
    times[0] = firstToken;
    System.arraycopy(decode, 0, times, 1, decode.length);
    return times;
  }

  static List<Attribution.Gap> gaps(RequestView v, RequestView.Index index, long firstToken) {
    long[] times = tokenTimes(v, firstToken);
    List<Attribution.Gap> gaps = new ArrayList<>();
    if (times.length < 2) {
      return gaps;
    }
    long[] g = new long[times.length - 1];
    for (int i = 1; i < times.length; i++) {
      g[i - 1] = times[i] - times[i - 1];
    }
    long[] sorted = g.clone();
    Arrays.sort(sorted);
    long median = sorted[sorted.length / 2];
    for (int i = 1; i < times.length; i++) {
      long gap = g[i - 1];
      String cause = "";
      if (gap > median * MARGIN && gap - median >= MIN_EXCESS_NS) {
        cause = cause(v, index, times[i - 1], times[i], gap - median);
      }
      gaps.add(new Attribution.Gap(i, times[i - 1], gap, cause));
    }
    return gaps;
  }

  private static String cause(RequestView v, RequestView.Index index, long from, long to, long excessNs) {
    SpanRecord e = v.engine();
    for (long preempted : v.request().preemptionNs()) {
      if (preempted > from && preempted <= to) {
        return "preempted";
      }
    }
    String rankWait = rankWait(v, index, from, to, excessNs);
    if (rankWait != null) {
      return rankWait;
    }
    SpanRecord stall = null;
    long stallTokens = -1;
    SpanRecord before = null;
    SpanRecord producing = null;
    for (SpanRecord s : RequestView.Index.overlapping(index.engineSteps, index.longestEngineStepNs, from - index.longestEngineStepNs, to)) {
      if (!s.service().equals(e.service()) || !s.clockDomain().equals(e.clockDomain())) {
        continue;
      }
      if (s.endNs() <= from) {
        before = s;
      }
      if (s.startNs() < to && s.endNs() > from) {
        List<String> served = index.served(s);
        long prefill = s.longAttr(LlmlatAttributes.STEP_PREFILL_TOKENS, 0);
        if (prefill > 0 && prefill > stallTokens && served.stream().anyMatch(t -> !t.equals(v.traceId()))) {
          stall = s;
          stallTokens = prefill;
        }
        if (served.contains(v.traceId())) {
          producing = s;
        }
      }
    }
    if (stall != null) {
      String other = index.served(stall).stream().filter(t -> !t.equals(v.traceId())).findFirst().orElse("?");
      return "stalled by prefill of request " + other + " (" + stallTokens + " tokens)";
    }
    if (producing == null) {
      // engines without step spans: GPU steps name their requests too
      for (SpanRecord g : RequestView.Index.overlapping(index.gpuSteps, index.longestGpuStepNs, from, to)) {
        {
          List<String> served = index.served(g);
          if ("prefill".equals(g.attr(LlmlatAttributes.STEP_KIND)) && !served.contains(v.traceId()) && !served.isEmpty()) {
            return "stalled by prefill of request " + served.get(0);
          }
        }
      }
    }
    if (producing != null && before != null) {
      long now = producing.longAttr(LlmlatAttributes.STEP_BATCH_SIZE, 0);
      long then = before.longAttr(LlmlatAttributes.STEP_BATCH_SIZE, 0);
      if (now > then && then > 0) {
        return "batch grew to " + now;
      }
    }
    return String.format("slow step (%.1f ms)", (to - from) / 1e6);
  }

  /**
   * "waited N ms for rank R" where the request's steps in the gap (those mostly inside it) waited for a late
   * rank at least half the gap's excess over the median, else null.
   */
  private static String rankWait(RequestView v, RequestView.Index index, long from, long to, long excessNs) {
    if (index.rankWaits.isEmpty()) {
      return null;
    }
    java.util.Map<String, Long> byRank = new java.util.LinkedHashMap<>();
    java.util.Set<RankWaits.StepWait> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    for (SpanRecord g : RequestView.Index.overlapping(index.gpuSteps, index.longestGpuStepNs, from, to)) {
      RankWaits.StepWait w = index.rankWaits.get(g);
      if (w == null || !seen.add(w) || !index.served(g).contains(v.traceId())) {
        continue;
      }
      long inside = Math.min(to, w.endNs()) - Math.max(from, w.startNs());
      if (2 * inside >= w.endNs() - w.startNs() && w.waitNs() > 0) {
        byRank.merge(w.late().name(), w.waitNs(), Long::sum);
      }
    }
    return byRank.entrySet().stream().max(java.util.Map.Entry.comparingByValue())
        .filter(r -> 2 * r.getValue() >= excessNs)
        .map(r -> String.format("waited %.1f ms for %s", r.getValue() / 1e6, r.getKey())).orElse(null);
  }
}
