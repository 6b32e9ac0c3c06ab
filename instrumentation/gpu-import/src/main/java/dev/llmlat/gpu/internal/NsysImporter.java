package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.gpu.UnattributedReason;
import dev.llmlat.nvtx.RangeMatch;
import dev.llmlat.otlpkafka.SpanSink;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * Imports an Nsight Systems export: NVTX ranges that match the pattern become steps; each
 * kernel/memcpy/memset joins the innermost matching range open on the CPU thread whose runtime call
 * launched it (same correlation id, same process) at the time of that call. GPU-time overlap plays
 * no part: with asynchronous launches a kernel often runs after its range has closed.
 *
 * <p>The join runs in Java rather than in sqlite (a {@code GROUP BY} over the runtime table and a
 * sort of all activities took most of the time): ranges per thread in sorted arrays ({@link
 * RangeIndex}), runtime calls in a primitive table ({@link LaunchCalls}), then one pass over the
 * activity tables ({@link ActivityStream}). A {@link NsysReader} thread reads the later part of the
 * runtime table and then the activities' rows; this thread reads the earlier part (sized by {@link
 * #earlierShare} so both threads finish together), then joins the rows ({@link LaunchJoin}), builds
 * spans and feeds the sink. Memory is bounded by ranges, runtime calls and the reader's queue, not
 * by activities. Should a table turn out not to be in start order, the activities come again
 * sorted; the writer recounts those it already emitted ({@link GpuSpanWriter#restart}), so no span
 * goes out twice.
 */
public final class NsysImporter {
  private static final int PROGRESS_EVERY = 4096;

  private NsysImporter() {}

  // Time per row, measured with both threads running (they slow each other unevenly on shared
  // cores): a runtime row read and filtered in sqlite (most are dropped there), an activity row
  // read, an activity joined and encoded. docs/benchmarks.md has the measurements.
  private static final double RUNTIME_ROW_NS = 260;
  private static final double ACTIVITY_READ_NS = 640;
  private static final double ACTIVITY_ENCODE_NS = 315;

  /**
   * The share of the runtime rows this thread reads (it then joins and encodes); the reader reads
   * the rest and then the activities, queueing what it reads before this thread is done. Chosen so
   * both threads have the same work: {@code x R + E = (1 - x) R + A}, as far as the reader's queue
   * lets it get ahead (about 0.73 on the H200 capture).
   */
  static double earlierShare(long runtimeRows, long activityRows) {
    return earlierShare(
        runtimeRows, activityRows, (long) NsysReader.QUEUED * ActivityBatch.CAPACITY);
  }

  /**
   * @param queuedRows how many activities the reader's queue holds
   */
  static double earlierShare(long runtimeRows, long activityRows, long queuedRows) {
    double r = runtimeRows * RUNTIME_ROW_NS;
    if (r <= 0) {
      return 0.5;
    }
    double x = (r + activityRows * (ACTIVITY_READ_NS - ACTIVITY_ENCODE_NS)) / (2 * r);
    // The reader gets ahead by (2x - 1) R; past what its queue holds it would only wait.
    double queued = queuedRows * ACTIVITY_READ_NS;
    x = Math.min(x, 0.5 + queued / (2 * r));
    return Math.max(0.2, Math.min(1.0, x));
  }

  public static ImportReport run(NsysExport export, ImportOptions options, SpanSink sink)
      throws IOException {
    long offset = export.epochOffsetNs();
    GpuSpanWriter writer =
        new GpuSpanWriter(
            export.file(),
            ExportFormat.NSYS_SQLITE,
            options,
            sink,
            export.clockRule(),
            "nsys|" + export.file().getFileName() + "|" + offset,
            true);
    RangeIndex index = new RangeIndex();
    boolean anyRanges = false;
    try {
      writer.exportHost(export.hostName());
      if (export.has(NsysExport.NVTX)) {
        try (PreparedStatement ps = export.ranges();
            ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            anyRanges = true;
            writer.countRange();
            String text = rs.getString(4);
            Optional<RangeMatch> m = options.pattern().match(text);
            if (m.isPresent()) {
              long start = rs.getLong(1);
              long end = rs.getLong(2);
              String problem =
                  export.timeProblem(start) != null
                      ? "start " + export.timeProblem(start)
                      : export.timeProblem(end) != null ? "end " + export.timeProblem(end) : null;
              if (problem != null) {
                throw new InvalidExportException(
                    export.file(), NsysExport.NVTX + " range '" + text + "': " + problem);
              }
              long thread = rs.getLong(3);
              int step =
                  writer.addStep(
                      m.get(),
                      text,
                      start + offset,
                      end + offset,
                      NsysExport.pidOf(thread),
                      NsysExport.tidOf(thread));
              index.add(thread, start, end, step);
            }
          }
        }
      }
      UnattributedReason noStep =
          !anyRanges
              ? UnattributedReason.NO_RANGES_IN_EXPORT
              : writer.stepCount() == 0
                  ? UnattributedReason.NO_RANGE_MATCHED_PATTERN
                  : UnattributedReason.LAUNCHED_OUTSIDE_MATCHING_RANGE;
      UnattributedReason noLaunch =
          anyRanges && writer.stepCount() > 0 ? UnattributedReason.NO_LAUNCH_RECORD : noStep;
      long[] rowids =
          export.has(NsysExport.RUNTIME) ? export.rowidRange(NsysExport.RUNTIME) : new long[2];
      long activityRows = export.activityRowsEstimate();
      long mid =
          rowids[0]
              + Math.round(
                  (rowids[1] - rowids[0]) * earlierShare(rowids[1] - rowids[0], activityRows));
      ImportProgress progress = options.progress();
      long total = Math.max(1, activityRows);
      long done = 0;
      try (NsysReader reader = NsysReader.start(export.reopen(), mid, rowids[1])) {
        LaunchCalls earlier = LaunchCalls.read(export, rowids[0], mid);
        LaunchJoin join = new LaunchJoin(earlier, reader.laterCalls(), index, noStep, noLaunch);
        for (ActivityBatch b = reader.take(); b != null; b = reader.take()) {
          if (b.restart) {
            writer.restart();
            done = 0;
          }
          for (int i = 0; i < b.size; i++) {
            join.join(b.correlation[i], b.globalPid[i]);
            if (b.seen[i]) {
              writer.recount(
                  b.kind[i], b.start[i] + offset, b.end[i] + offset, join.step, join.reason);
            } else {
              writer.activity(
                  b.kind[i],
                  b.start[i] + offset,
                  b.end[i] + offset,
                  b.name[i],
                  b.device[i],
                  b.stream[i],
                  Math.max(0, b.correlation[i]),
                  b.bytes[i],
                  join.pid,
                  join.tid,
                  join.step,
                  join.reason);
            }
            if (++done % PROGRESS_EVERY == 0) {
              progress.update(Math.min(done, total), Math.max(done, total));
            }
          }
          reader.release(b);
        }
        writer.warnings().addAll(reader.warnings());
      }
      ImportReport report = writer.finish();
      progress.update(done, done);
      return report;
    } catch (SQLException e) {
      throw new InvalidExportException(
          export.file(), "unreadable Nsight export: " + NsysExport.describe(e), e);
    }
  }
}
