package dev.llmlat.gpu.internal;

import dev.llmlat.semconv.CollectiveKernels;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Gathers, while an export is scanned, what {@link RankTimeline}s need: per (process, device) its
 * collective kernels with what joins them to their launch (kept until the export's steps are known)
 * and the unions that give compute/communication overlap. A rank is a process's device.
 */
final class RankCollector {
  /** PyTorch profiler's step annotation: a step too when no engine range marks steps. */
  static final Pattern PROFILER_STEP = Pattern.compile("ProfilerStep#\\d+");

  /** Finds a collective's step from how it was launched; null when outside any step. */
  interface StepResolver {
    StepKey step(long correlation, long launchKey);
  }

  private final boolean sorted;
  private final Map<List<Long>, Rank> ranks =
      new TreeMap<>(
          (a, b) ->
              a.get(0).equals(b.get(0))
                  ? Long.compare(a.get(1), b.get(1))
                  : Long.compare(a.get(0), b.get(0)));
  private long lastPid = Long.MIN_VALUE;
  private long lastDevice = Long.MIN_VALUE;
  private Rank last;
  private long collectives;

  /**
   * @param sorted whether activities arrive in start order (unions then keep constant memory)
   */
  RankCollector(boolean sorted) {
    this.sorted = sorted;
  }

  private final class Rank {
    final long pid;
    final long device;
    long[] starts = new long[16];
    long[] ends = new long[16];
    long[] correlations = new long[16];
    long[] launchKeys = new long[16];
    String[] names = new String[16];
    int n;
    final IntervalUnion collective = union();
    final IntervalUnion compute = union();
    final IntervalUnion either = union();

    Rank(long pid, long device) {
      this.pid = pid;
      this.device = device;
    }
  }

  private IntervalUnion union() {
    return sorted ? IntervalUnion.streaming() : IntervalUnion.buffered();
  }

  /**
   * @param pid the launching process (-1 when unknown)
   * @param launchKey what else the resolver needs to find the launch (Nsight: globalPid; Kineto:
   *     External id)
   */
  void kernel(
      long start, long end, String name, long pid, long device, long correlation, long launchKey) {
    if (end < start) {
      end = start;
    }
    if (pid != lastPid || device != lastDevice) {
      last = ranks.computeIfAbsent(List.of(pid, device), k -> new Rank(pid, device));
      lastPid = pid;
      lastDevice = device;
    }
    Rank r = last;
    r.either.add(start, end);
    if (!CollectiveKernels.matches(name)) {
      r.compute.add(start, end);
      return;
    }
    r.collective.add(start, end);
    collectives++;
    if (r.n == r.starts.length) {
      int c = r.n * 2;
      r.starts = Arrays.copyOf(r.starts, c);
      r.ends = Arrays.copyOf(r.ends, c);
      r.correlations = Arrays.copyOf(r.correlations, c);
      r.launchKeys = Arrays.copyOf(r.launchKeys, c);
      r.names = Arrays.copyOf(r.names, c);
    }
    r.starts[r.n] = start;
    r.ends[r.n] = end;
    r.correlations[r.n] = correlation;
    r.launchKeys[r.n] = launchKey;
    r.names[r.n] = name;
    r.n++;
  }

  boolean anyCollectives() {
    return collectives > 0;
  }

  /** The ranks that ran collectives, their kernels given their steps. */
  List<RankTimeline> timelines(int clockDomain, Path file, StepResolver steps) {
    List<RankTimeline> out = new ArrayList<>();
    for (Rank r : ranks.values()) {
      if (r.n == 0) {
        continue;
      }
      Integer[] order = new Integer[r.n];
      for (int i = 0; i < r.n; i++) {
        order[i] = i;
      }
      long[] s = r.starts;
      Arrays.sort(order, (a, b) -> Long.compare(s[a], s[b])); // JSON traces come in any order
      List<CollectiveKernel> kernels = new ArrayList<>(r.n);
      for (int i : order) {
        kernels.add(
            new CollectiveKernel(
                steps.step(r.correlations[i], r.launchKeys[i]),
                r.starts[i],
                r.ends[i],
                r.names[i]));
      }
      long overlap = r.collective.length() + r.compute.length() - r.either.length();
      out.add(new RankTimeline(clockDomain, file, r.pid, r.device, kernels, overlap));
    }
    return out;
  }
}
