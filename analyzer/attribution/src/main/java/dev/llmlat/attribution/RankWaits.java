package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tensor-parallel steps: one step run by N ranks (a process and a GPU each) shows as one GPU step
 * span per rank, with the same kind and trace ids, each with its collective kernels. The k-th
 * collective of the step on each rank is one collective (ranks issue them in the same order); a
 * rank's wait in it is the latest start among the ranks minus its own, so the step's wait for a
 * late rank is the longest any rank spent so, and the late rank is the one whose late starts the
 * others waited for.
 */
final class RankWaits {
  private RankWaits() {}

  /**
   * One rank of a step: where it ran ({@code rank} by host, device and process among the step's),
   * and how long it waited.
   */
  record Rank(int rank, String host, long pid, long device, long waitNs) {
    String name() {
      return "rank " + rank;
    }

    String where() {
      return "device "
          + device
          + (pid >= 0 ? ", pid " + pid : "")
          + (host.isEmpty() ? "" : ", " + host);
    }
  }

  /**
   * One step on several ranks: its GPU step spans (earliest first), its ranks, the longest wait of
   * a rank in the step's collectives, and the rank waited for.
   */
  record StepWait(List<SpanRecord> copies, List<Rank> ranks, long waitNs, Rank late) {
    long startNs() {
      return copies.stream().mapToLong(SpanRecord::startNs).min().orElse(0);
    }

    long endNs() {
      return copies.stream().mapToLong(SpanRecord::endNs).max().orElse(0);
    }

    /** The busiest copy's GPU busy time: the step is as long as its slowest rank. */
    long busyNs() {
      return copies.stream()
          .mapToLong(c -> c.longAttr(LlmlatAttributes.GPU_BUSY_NS, c.durationNs()))
          .max()
          .orElse(0);
    }
  }

  /** A step copy's rank identity and its collectives in start order. */
  private record Copy(
      SpanRecord step, String host, long pid, long device, List<SpanRecord> collectives) {}

  /**
   * The steps run by several ranks among {@code gpuSteps} (in start order), each copy mapped to its
   * step. Copies are told apart by the device (and process) of their collectives; the i-th
   * occurrence of a step (same kind and requests) on each rank is one step.
   */
  static Map<SpanRecord, StepWait> of(
      List<SpanRecord> gpuSteps,
      Map<String, List<SpanRecord>> collectivesByStep,
      Map<SpanRecord, List<String>> served) {
    Map<SpanRecord, StepWait> out = new IdentityHashMap<>();
    if (collectivesByStep.isEmpty()) {
      return out;
    }
    Map<String, Map<String, List<Copy>>> byStep =
        new LinkedHashMap<>(); // step key -> rank -> copies in start order
    for (SpanRecord g : gpuSteps) {
      List<SpanRecord> kernels = collectivesByStep.get(g.spanId());
      if (kernels == null || kernels.isEmpty()) {
        continue;
      }
      kernels.sort(Comparator.comparingLong(SpanRecord::startNs));
      SpanRecord k = kernels.get(0);
      long device = k.longAttr(LlmlatAttributes.GPU_DEVICE, -1);
      long pid = k.longAttr("process.pid", -1);
      String rankKey = k.host() + '\u0000' + device + '\u0000' + pid;
      String stepKey =
          g.service()
              + '\u0000'
              + g.attr(LlmlatAttributes.STEP_KIND)
              + '\u0000'
              + served.getOrDefault(g, List.of());
      byStep
          .computeIfAbsent(stepKey, x -> new LinkedHashMap<>())
          .computeIfAbsent(rankKey, x -> new ArrayList<>())
          .add(new Copy(g, k.host(), pid, device, kernels));
    }
    for (Map<String, List<Copy>> ranks : byStep.values()) {
      if (ranks.size() < 2) {
        continue;
      }
      List<List<Copy>> perRank = new ArrayList<>(ranks.values());
      perRank.sort(
          Comparator.comparing((List<Copy> c) -> c.get(0).host())
              .thenComparingLong(c -> c.get(0).device())
              .thenComparingLong(c -> c.get(0).pid()));
      int occurrences = perRank.stream().mapToInt(List::size).min().orElse(0);
      for (int i = 0; i < occurrences; i++) {
        List<Copy> copies = new ArrayList<>();
        for (List<Copy> r : perRank) {
          copies.add(r.get(i));
        }
        StepWait w = wait(copies);
        w.copies().forEach(c -> out.put(c, w));
      }
    }
    return out;
  }

  private static StepWait wait(List<Copy> copies) {
    int n = copies.size();
    int count = copies.stream().mapToInt(c -> c.collectives().size()).min().orElse(0);
    long[] waits = new long[n];
    long[] waitedFor = new long[n];
    for (int k = 0; k < count; k++) {
      long latest = Long.MIN_VALUE;
      long earliest = Long.MAX_VALUE;
      int late = 0;
      for (int r = 0; r < n; r++) {
        long start = copies.get(r).collectives().get(k).startNs();
        if (start > latest) {
          latest = start;
          late = r;
        }
        earliest = Math.min(earliest, start);
      }
      for (int r = 0; r < n; r++) {
        waits[r] += latest - copies.get(r).collectives().get(k).startNs();
      }
      waitedFor[late] += latest - earliest;
    }
    List<Rank> ranks = new ArrayList<>(n);
    int late = 0;
    long longest = 0;
    for (int r = 0; r < n; r++) {
      Copy c = copies.get(r);
      ranks.add(new Rank(r, c.host(), c.pid(), c.device(), waits[r]));
      longest = Math.max(longest, waits[r]);
      late = waitedFor[r] > waitedFor[late] ? r : late;
    }
    List<SpanRecord> steps = new ArrayList<>(copies.stream().map(Copy::step).toList());
    steps.sort(Comparator.comparingLong(SpanRecord::startNs));
    return new StepWait(List.copyOf(steps), List.copyOf(ranks), longest, ranks.get(late));
  }
}
