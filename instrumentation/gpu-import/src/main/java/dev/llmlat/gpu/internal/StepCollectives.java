package dev.llmlat.gpu.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Matches collectives across ranks: the k-th collective of a step on each rank is one collective
 * (ranks issue the same collectives in the same order, so order is the evidence; GPU times are not,
 * as clocks of separate exports differ). Collectives launched outside any step form one more group.
 * A k-th collective some rank lacks is not matched.
 */
public final class StepCollectives {
  private StepCollectives() {}

  /**
   * One collective: per rank (index into the ranks given), its kernel's start and end in that
   * rank's clock.
   */
  public record Collective(StepKey step, int k, long[] startNs, long[] endNs) {}

  /**
   * @param collectives in step order (first appearance on the first rank), then k
   */
  public record Matched(List<Collective> collectives, int[] matchedPerRank) {}

  public static Matched match(List<RankTimeline> ranks) {
    int n = ranks.size();
    List<Map<StepKey, List<CollectiveKernel>>> byStep = new ArrayList<>();
    Map<StepKey, Boolean> order = new LinkedHashMap<>();
    for (RankTimeline r : ranks) {
      Map<StepKey, List<CollectiveKernel>> m = new HashMap<>();
      for (CollectiveKernel c : r.collectives()) { // already in start order
        m.computeIfAbsent(c.step(), s -> new ArrayList<>()).add(c);
        order.putIfAbsent(c.step(), Boolean.TRUE);
      }
      byStep.add(m);
    }
    List<Collective> out = new ArrayList<>();
    int[] matched = new int[n];
    for (StepKey step : order.keySet()) {
      int count = Integer.MAX_VALUE;
      for (Map<StepKey, List<CollectiveKernel>> m : byStep) {
        count = Math.min(count, m.getOrDefault(step, List.of()).size());
      }
      for (int k = 0; k < count; k++) {
        long[] starts = new long[n];
        long[] ends = new long[n];
        for (int r = 0; r < n; r++) {
          CollectiveKernel c = byStep.get(r).get(step).get(k);
          starts[r] = c.startNs();
          ends[r] = c.endNs();
          matched[r]++;
        }
        out.add(new Collective(step, k, starts, ends));
      }
    }
    return new Matched(out, matched);
  }
}
