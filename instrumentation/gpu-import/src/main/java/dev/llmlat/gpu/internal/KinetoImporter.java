package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.gpu.UnattributedReason;
import dev.llmlat.nvtx.RangeMatch;
import dev.llmlat.otlpkafka.SpanSink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Imports a Kineto trace in two streaming passes. Pass 1 reads the CPU side — annotations that
 * match the pattern, runtime/driver calls by correlation id, CPU ops by External id — and checks
 * the document's shape, so a bad file fails before anything is emitted. Pass 2 streams the GPU
 * activities: each joins the innermost matching annotation open on the thread of its launch call
 * (found by correlation id, else by External id). Only when the trace has no matching CPU
 * annotation at all do matching {@code gpu_user_annotation} ranges (GPU lanes) stand in, by GPU
 * time.
 */
public final class KinetoImporter {
  static final String RULE_BASE = "kineto:baseTimeNanoseconds+ts*1000";
  static final String RULE_ABSOLUTE =
      "kineto:ts*1000 (no baseTimeNanoseconds; ts are absolute Unix us)";

  private KinetoImporter() {}

  private record Range(long thread, long start, long end, String text, RangeMatch match) {}

  public static String clockRule(Long base) {
    return base == null ? RULE_ABSOLUTE : RULE_BASE;
  }

  public static ImportReport run(Path file, ImportOptions options, SpanSink sink)
      throws InvalidExportException {
    long size;
    try {
      size = Files.size(file);
    } catch (java.io.IOException e) {
      throw new InvalidExportException(file, "unreadable", e);
    }
    long total = 2 * size;
    List<Range> cpu = new ArrayList<>();
    List<Range> gpu = new ArrayList<>();
    long[] rangeCount = new long[1];
    LongTable launches = new LongTable(4); // correlation -> thread key, ts, pid, tid
    LongTable cpuOps = new LongTable(4); // External id -> thread key, ts, pid, tid
    Warnings warnings = new Warnings();
    KinetoTrace.Header header =
        KinetoTrace.scan(
            file,
            options.progress(),
            0,
            total,
            e -> {
              if (e.cat == null) {
                return;
              }
              switch (e.cat) {
                case "user_annotation":
                  {
                    rangeCount[0]++;
                    Optional<RangeMatch> m = options.pattern().match(e.name);
                    if (m.isPresent()) {
                      cpu.add(new Range(e.threadKey(), e.tsNs, e.tsNs + e.durNs, e.name, m.get()));
                    }
                    break;
                  }
                case "gpu_user_annotation":
                  {
                    Optional<RangeMatch> m = options.pattern().match(e.name);
                    if (m.isPresent()) {
                      gpu.add(new Range(e.threadKey(), e.tsNs, e.tsNs + e.durNs, e.name, m.get()));
                    }
                    break;
                  }
                case "cpu_op":
                  if (e.externalId >= 0) {
                    cpuOps.putIfAbsent(
                        e.externalId,
                        e.threadKey(),
                        e.tsNs,
                        launchId(e, e.pid, e.numericPid, warnings),
                        launchId(e, e.tid, e.numericTid, warnings));
                  }
                  break;
                default:
                  if (e.isLaunchCall()) {
                    launches.putIfAbsent(
                        e.correlation,
                        e.threadKey(),
                        e.tsNs,
                        launchId(e, e.pid, e.numericPid, warnings),
                        launchId(e, e.tid, e.numericTid, warnings));
                  }
              }
            });
    Long base = header.baseTimeNanoseconds();
    long offset = base == null ? 0 : base;
    checkClock(file, header, offset);
    header.warnings(warnings);
    GpuSpanWriter writer =
        new GpuSpanWriter(
            file,
            ExportFormat.KINETO_JSON,
            options,
            sink,
            clockRule(base),
            "kineto|" + file.getFileName() + "|" + offset + "|" + header.events(),
            false);
    for (long i = 0; i < rangeCount[0]; i++) {
      writer.countRange();
    }
    boolean byGpuLane = cpu.isEmpty() && !gpu.isEmpty();
    List<Range> used = byGpuLane ? gpu : cpu;
    used.sort(Comparator.comparingLong(Range::start));
    RangeIndex index = new RangeIndex();
    for (Range r : used) {
      int step = writer.addStep(r.match(), r.text(), r.start() + offset, r.end() + offset);
      index.add(r.thread(), r.start(), r.end(), step);
    }
    boolean anyRanges = rangeCount[0] > 0 || !gpu.isEmpty();
    UnattributedReason noStep =
        !anyRanges
            ? UnattributedReason.NO_RANGES_IN_EXPORT
            : used.isEmpty()
                ? UnattributedReason.NO_RANGE_MATCHED_PATTERN
                : UnattributedReason.LAUNCHED_OUTSIDE_MATCHING_RANGE;
    KinetoTrace.scan(
        file,
        options.progress(),
        size,
        total,
        e -> {
          int kind = e.gpuKind();
          if (kind < 0 || !e.hasTs) {
            return;
          }
          int launch = e.correlation >= 0 ? launches.find(e.correlation) : -1;
          LongTable from = launches;
          if (launch < 0 && e.externalId >= 0) {
            launch = cpuOps.find(e.externalId);
            from = cpuOps;
          }
          int step = -1;
          UnattributedReason reason = noStep;
          if (byGpuLane) {
            step = index.find(e.threadKey(), e.tsNs);
          } else if (launch >= 0) {
            step = index.find(from.value(launch, 0), from.value(launch, 1));
          } else if (!used.isEmpty()) {
            reason = UnattributedReason.NO_LAUNCH_RECORD;
          }
          long device = e.gpuDevice(); // in range: checked by KinetoTrace
          long stream = e.gpuStream();
          writer.activity(
              kind,
              e.tsNs + offset,
              e.tsNs + e.durNs + offset,
              e.name,
              device,
              stream,
              Math.max(e.correlation, 0),
              e.bytes,
              launch >= 0 ? from.value(launch, 2) : -1,
              launch >= 0 ? from.value(launch, 3) : -1,
              step,
              reason);
        });
    writer.warnings().addAll(warnings);
    ImportReport report = writer.finish();
    options.progress().update(total, total);
    return report;
  }

  static final String LAUNCH_ID_WARNING =
      "launch calls whose pid or tid is not a UInt32 (gpu_kernels.Pid, Tid): "
          + "left out of their kernels' spans";

  /**
   * The launching process or thread id a kernel span carries, or -1 when there is none to carry: a
   * name ({@code "Spans"}), or a number that does not fit the store's UInt32 (some Kineto versions
   * write thread ids as negative int32s): those are counted, not wrapped. The join itself uses
   * {@link KinetoTrace.Event#threadKey()}, which keeps them whole.
   */
  private static long launchId(KinetoTrace.Event e, long id, boolean numeric, Warnings warnings) {
    if (!numeric) {
      return -1;
    }
    if (Limits.fitsUint32(id)) {
      return id;
    }
    if (id != -1 && warnings.count(LAUNCH_ID_WARNING)) { // -1: not given
      warnings.first(
          LAUNCH_ID_WARNING,
          "traceEvents[" + e.index + "] " + (id == e.pid ? "pid " : "tid ") + id);
    }
    return -1;
  }

  /**
   * Every event's times plus the clock anchor must be Unix ns a long holds (1970 to 2262); the
   * header's {@code baseTimeNanoseconds} may follow the events, so this is checked once pass 1 is
   * done, before anything is emitted.
   */
  private static void checkClock(Path file, KinetoTrace.Header h, long offset)
      throws InvalidExportException {
    if (h.minTsAt() < 0) {
      return; // no event has a time
    }
    String anchor = offset == 0 ? "" : " + baseTimeNanoseconds " + offset + " ns";
    if (h.minTsNs() + offset < 0) { // offset >= 0: cannot overflow
      throw new InvalidExportException(
          file,
          "traceEvents["
              + h.minTsAt()
              + "].ts: "
              + Decimals.nanosAsMicros(h.minTsNs())
              + " µs"
              + anchor
              + " "
              + Limits.BEFORE_1970);
    }
    if (h.maxEndNs() > Long.MAX_VALUE - offset) {
      throw new InvalidExportException(
          file,
          "traceEvents["
              + h.maxEndAt()
              + "].ts: "
              + Decimals.nanosAsMicros(h.maxEndNs())
              + " µs (ts + dur)"
              + anchor
              + " "
              + Limits.PAST_2262);
    }
  }
}
