package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.CollectiveSummary;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figures of {@link CollectiveSummary} from ranks' timelines: match, align clocks, then
 * measure.
 */
public final class CollectiveAnalysis {
  private CollectiveAnalysis() {}

  /** Ranks ordered as numbered: by export, device, process. */
  public static final Comparator<RankTimeline> RANK_ORDER =
      Comparator.comparingInt(RankTimeline::clockDomain)
          .thenComparingLong(RankTimeline::device)
          .thenComparingLong(RankTimeline::pid);

  /**
   * @param ranks in rank order ({@link #RANK_ORDER}); rank i is {@code ranks.get(i)}
   */
  public static CollectiveSummary summarize(List<RankTimeline> ranks) {
    int n = ranks.size();
    StepCollectives.Matched m = StepCollectives.match(ranks);
    int[] domains = new int[n];
    for (int r = 0; r < n; r++) {
      domains[r] = ranks.get(r).clockDomain();
    }
    RankClockAlignment.Offsets offsets = RankClockAlignment.estimate(domains, m.collectives());
    long[] off = offsets.offsetNs();
    long[] own = new long[n];
    long[] wait = new long[n];
    Map<StepKey, long[]> late = new LinkedHashMap<>(); // per step: charged lateness per rank
    Map<StepKey, long[]> firstStart =
        new LinkedHashMap<>(); // per step: earliest aligned start, count
    for (StepCollectives.Collective c : m.collectives()) {
      long latest = Long.MIN_VALUE;
      long earliest = Long.MAX_VALUE;
      int last = -1;
      long shortest = Long.MAX_VALUE;
      for (int r = 0; r < n; r++) {
        long s = c.startNs()[r] + off[r];
        if (s > latest) {
          latest = s;
          last = r;
        }
        earliest = Math.min(earliest, s);
        shortest = Math.min(shortest, c.endNs()[r] - c.startNs()[r]);
      }
      for (int r = 0; r < n; r++) {
        wait[r] += latest - (c.startNs()[r] + off[r]);
        own[r] += shortest;
      }
      long[] l = late.computeIfAbsent(c.step(), k -> new long[n]);
      if (latest > earliest) {
        l[last] += latest - earliest;
      }
      long[] f = firstStart.computeIfAbsent(c.step(), k -> new long[] {Long.MAX_VALUE, 0});
      f[0] = Math.min(f[0], earliest);
      f[1]++;
    }
    List<CollectiveSummary.RankCollectives> rows = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      RankTimeline t = ranks.get(r);
      long total = 0;
      for (CollectiveKernel c : t.collectives()) {
        total += c.durationNs();
      }
      rows.add(
          new CollectiveSummary.RankCollectives(
              r,
              t.file(),
              t.pid(),
              t.device(),
              t.collectives().size(),
              m.matchedPerRank()[r],
              total,
              own[r],
              wait[r],
              t.overlapNs(),
              off[r],
              offsets.evidence()[r]));
    }
    List<StepKey> order = new ArrayList<>(firstStart.keySet());
    order.sort(Comparator.comparingLong(k -> firstStart.get(k)[0]));
    List<CollectiveSummary.StepStraggler> steps = new ArrayList<>();
    for (StepKey k : order) {
      long[] l = late.get(k);
      int who = -1;
      for (int r = 0; r < n; r++) {
        if (l[r] > 0 && (who < 0 || l[r] > l[who])) {
          who = r;
        }
      }
      steps.add(
          new CollectiveSummary.StepStraggler(
              steps.size(),
              k == null ? null : k.name(),
              k == null ? 0 : k.occurrence(),
              (int) firstStart.get(k)[1],
              who,
              who < 0 ? 0 : l[who]));
    }
    return new CollectiveSummary(m.collectives().size(), rows, steps);
  }
}
