package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A request's inter-token latencies, and a named cause for every gap that stands out from the
 * request's own median (by 50% and at least 1 ms): the gateway blocked on its client (a slow
 * reader), a preemption, a late rank its decode step waited for (tensor parallelism), another
 * request's prefill running on the same engine, the batch growing, or a slow step.
 *
 * <p>The gaps are those the client saw. Tokens are produced at the engine's times (the decode
 * span's); where the gateway's SERVER span records blocks during which it could not write to its
 * client, a token that reached the gateway inside one went out when the block ended. The engine's
 * token reaches the gateway later than produced by the first token's transit (the gateway's first
 * chunk less the engine's first token, which also takes in what clock alignment left between the
 * two hosts), so the blocks are moved back by it onto the engine's times. A gap's backpressure is
 * then how long its token waited for the gateway after being produced; the rest of the gap is the
 * engine's. A block in which no token was produced delayed nothing and counts for no gap.
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

  /** The gaps, {@code backpressure} being the blocks of {@code v}'s gateway SERVER span. */
  static List<Attribution.Gap> gaps(
      RequestView v, RequestView.Index index, long firstToken, GatewayBackpressure backpressure) {
    long[] produced = tokenTimes(v, firstToken);
    List<Attribution.Gap> gaps = new ArrayList<>();
    if (produced.length < 2) {
      return gaps;
    }
    GatewayBackpressure blocks = backpressure.shifted(-transitNs(v, firstToken));
    long[] delivered = delivered(produced, blocks.blocks());
    long[] g = new long[produced.length - 1];
    for (int i = 1; i < produced.length; i++) {
      g[i - 1] = delivered[i] - delivered[i - 1];
    }
    long[] sorted = g.clone();
    Arrays.sort(sorted);
    long median = sorted[sorted.length / 2];
    for (int i = 1; i < produced.length; i++) {
      long gap = g[i - 1];
      // the client waits for the engine until the token is produced (or the one before went out),
      // then for the gateway
      long ready = Math.max(produced[i], delivered[i - 1]);
      long waited = delivered[i] - ready;
      String cause = "";
      if (gap > median * MARGIN && gap - median >= MIN_EXCESS_NS) {
        long excess = gap - median;
        cause =
            waited > 0 && 2 * waited >= excess
                ? backpressure(waited, blocks.causeAt(delivered[i]))
                : cause(v, index, produced[i - 1], produced[i], ready - delivered[i - 1], excess);
        if (blocks.truncated() && delivered[i] > blocks.placedUntilNs()) {
          cause += unplaced(blocks);
        }
      }
      gaps.add(new Attribution.Gap(i, delivered[i - 1], gap, cause, waited));
    }
    return gaps;
  }

  static String backpressure(long waitedNs, GatewayBlockCause cause) {
    return String.format("%s, %.1f ms", cause.text(), waitedNs / 1e6);
  }

  private static String unplaced(GatewayBackpressure blocks) {
    long rest = blocks.unplacedNs();
    return "; only the first "
        + blocks.events()
        + " of the gateway's "
        + blocks.count()
        + " blocks writing to its client were recorded"
        + (rest > 0
            ? String.format(", %.1f ms of blocking after them is not placed", rest / 1e6)
            : ", later ones are not placed");
  }

  /**
   * How much later than the engine produced it the gateway wrote a token: its first chunk less the
   * engine's first token, 0 where either is unknown or the difference is negative.
   */
  static long transitNs(RequestView v, long firstToken) {
    if (v.gatewayServer() == null || firstToken < 0) {
      return 0;
    }
    long chunk = TtftAttributor.gatewayFirstChunk(v.gatewayServer());
    return chunk > 0 && chunk >= firstToken ? chunk - firstToken : 0;
  }

  /**
   * When each token went out: when produced, or where produced inside a block (sorted, not
   * overlapping), at its end; never before the token before it.
   */
  static long[] delivered(long[] produced, List<GatewayBackpressure.Block> blocks) {
    long[] out = produced.clone();
    for (int i = 0; i < out.length; i++) {
      // the last block starting by the token's time
      int lo = 0;
      int hi = blocks.size();
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (blocks.get(mid).startNs() <= produced[i]) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      if (lo > 0 && blocks.get(lo - 1).endNs() > produced[i]) {
        out[i] = blocks.get(lo - 1).endNs();
      }
      if (i > 0) {
        out[i] = Math.max(out[i], out[i - 1]);
      }
    }
    return out;
  }

  /**
   * The engine's cause of a gap whose token was produced over (from, to]; {@code engineNs} is the
   * part of the gap the client waited for the engine (the whole gap without backpressure).
   */
  private static String cause(
      RequestView v, RequestView.Index index, long from, long to, long engineNs, long excessNs) {
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
    for (SpanRecord s :
        RequestView.Index.overlapping(
            index.engineSteps, index.longestEngineStepNs, from - index.longestEngineStepNs, to)) {
      if (!s.service().equals(e.service()) || !s.clockDomain().equals(e.clockDomain())) {
        continue;
      }
      if (s.endNs() <= from) {
        before = s;
      }
      if (s.startNs() < to && s.endNs() > from) {
        List<String> served = index.served(s);
        long prefill = s.longAttr(LlmlatAttributes.STEP_PREFILL_TOKENS, 0);
        if (prefill > 0
            && prefill > stallTokens
            && served.stream().anyMatch(t -> !t.equals(v.traceId()))) {
          stall = s;
          stallTokens = prefill;
        }
        if (served.contains(v.traceId())) {
          producing = s;
        }
      }
    }
    if (stall != null) {
      String other =
          index.served(stall).stream().filter(t -> !t.equals(v.traceId())).findFirst().orElse("?");
      return "stalled by prefill of request " + other + " (" + stallTokens + " tokens)";
    }
    if (producing == null) {
      // engines without step spans: GPU steps name their requests too
      for (SpanRecord g :
          RequestView.Index.overlapping(index.gpuSteps, index.longestGpuStepNs, from, to)) {
        {
          List<String> served = index.served(g);
          if ("prefill".equals(g.attr(LlmlatAttributes.STEP_KIND))
              && !served.contains(v.traceId())
              && !served.isEmpty()) {
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
    return String.format("slow step (%.1f ms)", engineNs / 1e6);
  }

  /**
   * "waited N ms for rank R" where the request's steps in the gap (those mostly inside it) waited
   * for a late rank at least half the gap's excess over the median, else null.
   */
  private static String rankWait(
      RequestView v, RequestView.Index index, long from, long to, long excessNs) {
    if (index.rankWaits.isEmpty()) {
      return null;
    }
    java.util.Map<String, Long> byRank = new java.util.LinkedHashMap<>();
    java.util.Set<RankWaits.StepWait> seen =
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    for (SpanRecord g :
        RequestView.Index.overlapping(index.gpuSteps, index.longestGpuStepNs, from, to)) {
      RankWaits.StepWait w = index.rankWaits.get(g);
      if (w == null || !seen.add(w) || !index.served(g).contains(v.traceId())) {
        continue;
      }
      long inside = Math.min(to, w.endNs()) - Math.max(from, w.startNs());
      if (2 * inside >= w.endNs() - w.startNs() && w.waitNs() > 0) {
        byRank.merge(w.late().name(), w.waitNs(), Long::sum);
      }
    }
    return byRank.entrySet().stream()
        .max(java.util.Map.Entry.comparingByValue())
        .filter(r -> 2 * r.getValue() >= excessNs)
        .map(r -> String.format("waited %.1f ms for %s", r.getValue() / 1e6, r.getKey()))
        .orElse(null);
  }
}
