package dev.llmlat.gpu.internal;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kineto trace's steps for collectives, gathered from its CPU events during the one scan:
 * annotations that name a step ({@link NsysSteps#isStep}), launch calls by correlation id, CPU ops
 * by External id; a kernel finds its step through its launch, as {@link KinetoImporter} joins them.
 * {@code ProfilerStep#N} marks a step of the whole process, so launches of any of its threads
 * (autograd, communication threads) join it by time; engine ranges join on their own thread.
 */
final class KinetoSteps {
  private record Range(long thread, long pid, long start, long end, String text) {}

  private final List<Range> ranges = new ArrayList<>();
  private final LongTable launches = new LongTable(3); // correlation -> thread key, ts, pid
  private final LongTable cpuOps = new LongTable(3); // External id -> thread key, ts, pid

  void cpuEvent(KinetoTrace.Event e) {
    if (e.cat == null || !e.hasTs) {
      return;
    }
    if ("user_annotation".equals(e.cat)) {
      if (NsysSteps.isStep(e.name)) {
        ranges.add(new Range(e.threadKey(), e.pid, e.tsNs, e.tsNs + e.durNs, e.name));
      }
    } else if ("cpu_op".equals(e.cat)) {
      if (e.externalId >= 0) {
        cpuOps.putIfAbsent(e.externalId, e.threadKey(), e.tsNs, e.pid);
      }
    } else if (e.isLaunchCall()) {
      launches.putIfAbsent(e.correlation, e.threadKey(), e.tsNs, e.pid);
    }
  }

  RankCollector.StepResolver resolver() {
    if (ranges.isEmpty()) {
      return (correlation, externalId) -> null;
    }
    ranges.sort(Comparator.comparingLong(Range::start));
    RangeIndex byThread = new RangeIndex();
    RangeIndex byProcess = new RangeIndex();
    List<StepKey> keys = new ArrayList<>();
    Map<List<Object>, Integer> seen = new HashMap<>();
    for (Range r : ranges) {
      String name = NsysSteps.keyName(r.text());
      int occurrence = seen.merge(List.of(r.pid(), name), 1, Integer::sum) - 1;
      if (RankCollector.PROFILER_STEP.matcher(r.text()).matches()) {
        byProcess.add(r.pid(), r.start(), r.end(), keys.size());
      } else {
        byThread.add(r.thread(), r.start(), r.end(), keys.size());
      }
      keys.add(new StepKey(name, occurrence));
    }
    return (correlation, externalId) -> {
      LongTable from = launches;
      int at = correlation >= 0 ? launches.find(correlation) : -1;
      if (at < 0 && externalId >= 0) {
        from = cpuOps;
        at = cpuOps.find(externalId);
      }
      if (at < 0) {
        return null;
      }
      int step = byThread.find(from.value(at, 0), from.value(at, 1));
      if (step < 0) {
        step = byProcess.find(from.value(at, 2), from.value(at, 1));
      }
      return step < 0 ? null : keys.get(step);
    };
  }
}
