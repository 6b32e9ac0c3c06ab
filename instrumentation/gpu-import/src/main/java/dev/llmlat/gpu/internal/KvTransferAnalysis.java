package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.CollectiveSummary;
import dev.llmlat.gpu.KvTransferSummary;
import dev.llmlat.nvtx.RangeMatch;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pairs each request's KV send with its receive (the ranges' shared key, {@link NsysSteps#keyName})
 * and joins each side's transfer kernels (collective kernels resolved to that range), on rank 0's
 * clock with the collectives' offsets.
 */
public final class KvTransferAnalysis {
  private KvTransferAnalysis() {}

  /** One side while it is gathered: its range and its kernels' envelope. */
  private static final class SideBuilder {
    final KvRange range;
    int rank = -1;
    long device = -1;
    long kernelStart = Long.MAX_VALUE;
    long kernelEnd = Long.MIN_VALUE;

    SideBuilder(KvRange range) {
      this.range = range;
    }

    KvTransferSummary.Side build(long offset) {
      boolean any = kernelStart <= kernelEnd;
      return new KvTransferSummary.Side(
          rank,
          range.pid(),
          device,
          range.startNs() + offset,
          range.endNs() + offset,
          any ? kernelStart : -1,
          any ? kernelEnd : -1);
    }
  }

  /**
   * @param ranks in rank order ({@link CollectiveAnalysis#RANK_ORDER})
   * @param collectives their summary (its clock offsets), null when fewer than two ranks
   * @return null when there are no transfer ranges
   */
  public static KvTransferSummary summarize(
      List<RankTimeline> ranks, CollectiveSummary collectives, List<KvRange> ranges) {
    if (ranges.isEmpty()) {
      return null;
    }
    Map<Integer, Long> domainOffset = new HashMap<>();
    long[] off = new long[ranks.size()];
    for (int r = 0; r < ranks.size(); r++) {
      off[r] = collectives == null ? 0 : collectives.ranks().get(r).clockOffsetNs();
      domainOffset.putIfAbsent(ranks.get(r).clockDomain(), off[r]);
    }
    Map<List<Object>, SideBuilder> sides = new LinkedHashMap<>();
    for (KvRange k : ranges) {
      sides.putIfAbsent(List.of(k.clockDomain(), k.pid(), k.key()), new SideBuilder(k));
    }
    for (int r = 0; r < ranks.size(); r++) {
      RankTimeline t = ranks.get(r);
      for (CollectiveKernel c : t.collectives()) {
        SideBuilder b =
            c.step() == null ? null : sides.get(List.of(t.clockDomain(), t.pid(), c.step()));
        if (b == null) {
          continue;
        }
        if (b.rank < 0) {
          b.rank = r;
          b.device = t.device();
        }
        b.kernelStart = Math.min(b.kernelStart, c.startNs() + off[r]);
        b.kernelEnd = Math.max(b.kernelEnd, c.endNs() + off[r]);
      }
    }
    Map<StepKey, KvTransferSummary.Side[]> byTransfer = new LinkedHashMap<>(); // [send, recv]
    Map<StepKey, String> traces = new HashMap<>();
    for (SideBuilder b : sides.values()) {
      KvTransferSummary.Side[] pair =
          byTransfer.computeIfAbsent(b.range.key(), k -> new KvTransferSummary.Side[2]);
      int at = RangeMatch.KV_SEND.equals(b.range.kind()) ? 0 : 1;
      if (pair[at] == null) { // a second side of one kind (a third instance) is left out
        pair[at] = b.build(domainOffset.getOrDefault(b.range.clockDomain(), 0L));
      }
      traces.put(b.range.key(), b.range.traceId());
    }
    List<KvTransferSummary.Transfer> out = new ArrayList<>();
    byTransfer.forEach(
        (key, pair) -> out.add(transfer(traces.get(key), key.occurrence(), pair[0], pair[1])));
    out.sort(Comparator.comparingLong(KvTransferAnalysis::firstStart));
    return new KvTransferSummary(out);
  }

  static KvTransferSummary.Transfer transfer(
      String traceId, int occurrence, KvTransferSummary.Side send, KvTransferSummary.Side recv) {
    long wait = -1;
    long wire = -1;
    if (send != null && recv != null && send.hasKernel() && recv.hasKernel()) {
      wait = Math.max(0, recv.kernelStartNs() - send.kernelStartNs());
      wire =
          Math.max(
              0,
              Math.min(send.kernelEndNs(), recv.kernelEndNs())
                  - Math.max(send.kernelStartNs(), recv.kernelStartNs()));
    }
    return new KvTransferSummary.Transfer(traceId, occurrence, send, recv, wait, wire, -1);
  }

  private static long firstStart(KvTransferSummary.Transfer t) {
    return Math.min(
        t.send() == null ? Long.MAX_VALUE : t.send().rangeStartNs(),
        t.recv() == null ? Long.MAX_VALUE : t.recv().rangeStartNs());
  }
}
