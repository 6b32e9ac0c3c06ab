package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuSummary;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Accumulates GPU activities into a {@link GpuSummary}. */
public final class Timeline {
  private static final int TOP = 20;

  private final boolean sorted;
  private final IntervalUnion all;
  private final IntervalUnion computation;
  private final IntervalUnion communication;
  private final IntervalUnion memcpy;
  private final long[] counts = new long[3];
  private final Map<List<Long>, Lane> lanes =
      new TreeMap<>(
          Comparator.<List<Long>>comparingLong(l -> l.get(0)).thenComparingLong(l -> l.get(1)));
  private final Map<String, long[]> byName = new HashMap<>();
  private long lastDevice = Long.MIN_VALUE;
  private long lastStream = Long.MIN_VALUE;
  private Lane lastLane;

  private final class Lane {
    final long[] counts = new long[3];
    final IntervalUnion busy = sorted ? IntervalUnion.streaming() : IntervalUnion.buffered();
  }

  /**
   * @param sorted whether activities arrive in start order (then memory stays constant)
   */
  public Timeline(boolean sorted) {
    this.sorted = sorted;
    this.all = union();
    this.computation = union();
    this.communication = union();
    this.memcpy = union();
  }

  private IntervalUnion union() {
    return sorted ? IntervalUnion.streaming() : IntervalUnion.buffered();
  }

  public void add(int kind, long start, long end, long device, long stream, String name) {
    if (end < start) {
      end = start;
    }
    counts[kind]++;
    all.add(start, end);
    if (kind == GpuSpanWriter.MEMCPY) {
      memcpy.add(start, end);
    } else if (name != null && name.contains("nccl")) {
      communication.add(start, end);
    } else {
      computation.add(start, end);
    }
    if (device != lastDevice || stream != lastStream) {
      lastLane = lanes.computeIfAbsent(List.of(device, stream), k -> new Lane());
      lastDevice = device;
      lastStream = stream;
    }
    lastLane.counts[kind]++;
    lastLane.busy.add(start, end);
    if (kind == GpuSpanWriter.KERNEL) {
      long[] t = byName.computeIfAbsent(name == null ? "(unnamed)" : name, k -> new long[2]);
      t[0]++;
      t[1] += end - start;
    }
  }

  public GpuSummary summary(Path file, ExportFormat format) {
    long total = all.count() == 0 ? 0 : all.max() - all.min();
    long busy = all.length();
    List<GpuSummary.StreamSummary> streams = new ArrayList<>();
    lanes.forEach(
        (k, l) ->
            streams.add(
                new GpuSummary.StreamSummary(
                    k.get(0),
                    k.get(1),
                    l.counts[0],
                    l.counts[1],
                    l.counts[2],
                    l.busy.length(),
                    l.busy.min(),
                    l.busy.max())));
    List<GpuSummary.KernelTime> top = new ArrayList<>();
    byName.forEach((n, t) -> top.add(new GpuSummary.KernelTime(n, t[0], t[1])));
    top.sort(
        Comparator.comparingLong(GpuSummary.KernelTime::totalNs)
            .reversed()
            .thenComparing(GpuSummary.KernelTime::name));
    return new GpuSummary(
        file,
        format,
        total,
        busy,
        computation.length(),
        communication.length(),
        memcpy.length(),
        total - busy,
        counts[0],
        counts[1],
        counts[2],
        streams,
        top.subList(0, Math.min(TOP, top.size())));
  }
}
