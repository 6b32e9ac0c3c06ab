package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuSummary;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.otlpjson.InvalidOtlpJsonException;
import dev.llmlat.otlpjson.OtlpJsonReader;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.List;

/**
 * Reads each format's GPU activities into a {@link Timeline}, and on request each rank's
 * collectives ({@link RankTimeline}: Nsight and Kineto, whose kernels carry names and launches).
 */
public final class Summaries {
  private Summaries() {}

  /**
   * A file's summary, the ranks in it that ran collectives and its KV-transfer ranges (none unless
   * asked for; transfer ranges are read from Nsight exports whose ranks ran collectives).
   */
  public record Scan(GpuSummary summary, List<RankTimeline> ranks, List<KvRange> transfers) {
    public Scan {
      ranks = List.copyOf(ranks);
      transfers = List.copyOf(transfers);
    }

    public Scan(GpuSummary summary, List<RankTimeline> ranks) {
      this(summary, ranks, List.of());
    }
  }

  public static GpuSummary summarize(Path file, ExportFormat format, ImportProgress progress)
      throws IOException {
    return scan(file, format, progress, -1).summary();
  }

  /**
   * @param clockDomain the ranks' clock domain, or -1 to leave collectives out (the plain summary)
   */
  public static Scan scan(Path file, ExportFormat format, ImportProgress progress, int clockDomain)
      throws IOException {
    Inputs.checkReadable(file); // before anything reads its size
    boolean ranks = clockDomain >= 0;
    switch (format) {
      case NSYS_SQLITE:
        return nsys(file, progress, clockDomain);
      case KINETO_JSON:
        {
          long size = Files.size(file);
          Timeline t = new Timeline(false);
          RankCollector collector = new RankCollector(false);
          KinetoSteps steps = new KinetoSteps();
          KinetoTrace.scan(
              file,
              progress,
              0,
              size,
              e -> {
                int kind = e.gpuKind();
                if (kind >= 0 && e.hasTs) {
                  t.add(kind, e.tsNs, e.tsNs + e.durNs, e.gpuDevice(), e.gpuStream(), e.name);
                  if (ranks && kind == GpuSpanWriter.KERNEL) {
                    collector.kernel(
                        e.tsNs,
                        e.tsNs + e.durNs,
                        e.name,
                        -1,
                        e.gpuDevice(),
                        e.correlation,
                        e.externalId);
                  }
                } else if (ranks) {
                  steps.cpuEvent(e);
                }
              });
          progress.update(size, size);
          GpuSummary summary = t.summary(file, format);
          return new Scan(
              summary,
              collector.anyCollectives()
                  ? collector.timelines(clockDomain, file, steps.resolver())
                  : List.of());
        }
      case CUDA_EVENT_JSONL:
        {
          long size = Files.size(file);
          Timeline t = new Timeline(false);
          // Only step brackets are known: each counts as one computation interval, not as a kernel.
          CudaEventLog.scan(
              file,
              progress,
              0,
              size,
              s -> t.add(GpuSpanWriter.KERNEL, s.startNs(), s.endNs(), 0, 0, null));
          GpuSummary raw = t.summary(file, format);
          return new Scan(
              new GpuSummary(
                  file,
                  format,
                  raw.totalNs(),
                  raw.busyNs(),
                  raw.computationNs(),
                  0,
                  0,
                  raw.idleNs(),
                  0,
                  0,
                  0,
                  List.of(),
                  List.of()),
              List.of());
        }
      case OTLP_JSON:
        {
          long size = Files.size(file);
          Timeline t = new Timeline(false);
          try {
            new OtlpJsonReader(file)
                .read(progress::update, 0, size, (group, span, where) -> otlpSpan(t, span));
          } catch (InvalidOtlpJsonException e) {
            throw Inputs.invalid(e);
          }
          progress.update(size, size);
          return new Scan(t.summary(file, format), List.of());
        }
      default:
        throw new IllegalArgumentException(format.toString());
    }
  }

  /**
   * Our own kernel spans (attribute {@code llmlat.gpu.kind}) count; other spans are not GPU
   * activity.
   */
  private static void otlpSpan(Timeline t, Span span) {
    int kind = -1;
    long device = 0;
    long stream = 0;
    for (KeyValue kv : span.getAttributesList()) {
      AnyValue v = kv.getValue();
      switch (kv.getKey()) {
        case LlmlatAttributes.GPU_KIND:
          kind =
              "memcpy".equals(v.getStringValue())
                  ? GpuSpanWriter.MEMCPY
                  : "memset".equals(v.getStringValue())
                      ? GpuSpanWriter.MEMSET
                      : GpuSpanWriter.KERNEL;
          break;
        case LlmlatAttributes.GPU_DEVICE:
          device = v.getIntValue();
          break;
        case LlmlatAttributes.GPU_STREAM:
          stream = v.getIntValue();
          break;
        default:
          break;
      }
    }
    if (kind >= 0) {
      t.add(
          kind,
          span.getStartTimeUnixNano(),
          span.getEndTimeUnixNano(),
          device,
          stream,
          span.getName());
    }
  }

  private static Scan nsys(Path file, ImportProgress progress, int clockDomain)
      throws InvalidExportException {
    try (NsysExport export = NsysExport.open(file)) {
      long offset = export.epochOffsetNs();
      long total = Math.max(1, export.activityRowsEstimate());
      ActivityStream activities = ActivityStream.open(export);
      try {
        Timeline t = new Timeline(true);
        RankCollector ranks = clockDomain >= 0 ? new RankCollector(true) : null;
        long done = add(export, activities, t, ranks, offset, total, progress);
        if (activities.outOfOrder()) { // rare: a table not in start order; all again, sorted
          activities = activities.rescanSorted(export);
          t = new Timeline(true);
          ranks = clockDomain >= 0 ? new RankCollector(true) : null;
          done = add(export, activities, t, ranks, offset, total, progress);
        }
        progress.update(done, done);
        GpuSummary summary = t.summary(file, ExportFormat.NSYS_SQLITE);
        // Steps are read only when there are collectives to place: the runtime table is the
        // export's largest.
        if (ranks == null || !ranks.anyCollectives()) {
          return new Scan(summary, List.of());
        }
        NsysSteps.Read steps = NsysSteps.read(export, clockDomain);
        return new Scan(
            summary, ranks.timelines(clockDomain, file, steps.steps()), steps.transfers());
      } finally {
        activities.close();
      }
    } catch (SQLException e) {
      throw new InvalidExportException(
          file, "unreadable Nsight export: " + NsysExport.describe(e), e);
    }
  }

  /** Adds the stream's activities to {@code t}; returns how many. */
  private static long add(
      NsysExport export,
      ActivityStream activities,
      Timeline t,
      RankCollector ranks,
      long offset,
      long total,
      ImportProgress progress)
      throws SQLException, InvalidExportException {
    long done = 0;
    while (activities.next()) {
      ActivityCursor a = activities.current();
      int kind = a.kind;
      String name =
          kind == GpuSpanWriter.KERNEL
              ? (a.nameId == ActivityCursor.NONE ? null : export.string(a.nameId))
              : kind == GpuSpanWriter.MEMCPY ? NsysExport.memcpyName(a.copyKind) : "Memset";
      t.add(kind, a.start + offset, a.end + offset, a.device, a.stream, name);
      if (ranks != null && kind == GpuSpanWriter.KERNEL) {
        long pid = a.globalPid == ActivityCursor.NONE ? -1 : NsysExport.pidOf(a.globalPid);
        ranks.kernel(
            a.start + offset, a.end + offset, name, pid, a.device, a.correlation, a.globalPid);
      }
      if (++done % 4096 == 0) {
        progress.update(Math.min(done, total), Math.max(done, total));
      }
    }
    return done;
  }
}
