package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.gpu.RangeMatch;
import dev.llmlat.gpu.SpanSink;
import dev.llmlat.gpu.UnattributedReason;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;

/**
 * Imports an Nsight Systems export: NVTX ranges that match the pattern become steps; each
 * kernel/memcpy/memset joins the innermost matching range open on the CPU thread whose runtime
 * call launched it (same correlation id, same process) at the time of that call. GPU-time overlap
 * plays no part: with asynchronous launches a kernel often runs after its range has closed.
 */
public final class NsysImporter {
  private static final int PROGRESS_EVERY = 4096;

  private NsysImporter() {}

  public static ImportReport run(NsysExport export, ImportOptions options, SpanSink sink)
      throws InvalidExportException {
    long offset = export.epochOffsetNs();
    GpuSpanWriter writer = new GpuSpanWriter(export.file(), ExportFormat.NSYS_SQLITE, options, sink,
        export.clockRule(), "nsys|" + export.file().getFileName() + "|" + offset, true);
    RangeIndex index = new RangeIndex();
    boolean anyRanges = false;
    try {
      if (export.has(NsysExport.NVTX)) {
        try (PreparedStatement ps = export.ranges(); ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            anyRanges = true;
            writer.countRange();
            String text = rs.getString(4);
            Optional<RangeMatch> m = options.pattern().match(text);
            if (m.isPresent()) {
              long start = rs.getLong(1);
              long end = rs.getLong(2);
              int step = writer.addStep(m.get(), text, start + offset, end + offset);
              index.add(rs.getLong(3), start, end, step);
            }
          }
        }
      }
      UnattributedReason noStep = !anyRanges ? UnattributedReason.NO_RANGES_IN_EXPORT
          : writer.stepCount() == 0 ? UnattributedReason.NO_RANGE_MATCHED_PATTERN
          : UnattributedReason.LAUNCHED_OUTSIDE_MATCHING_RANGE;
      ImportProgress progress = options.progress();
      long total = Math.max(1, export.activityRowsEstimate());
      long done = 0;
      try (PreparedStatement ps = export.activities(true)) {
        ps.setFetchSize(4096);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            int kind = rs.getInt(1);
            long start = rs.getLong(2);
            long end = rs.getLong(3);
            long device = rs.getLong(4);
            long stream = rs.getLong(5);
            long correlation = rs.getLong(6);
            long nameId = rs.getLong(8);
            boolean hasName = !rs.wasNull();
            long bytes = rs.getLong(9);
            long launchTid = rs.getLong(11);
            boolean launched = !rs.wasNull();
            long launchStart = rs.getLong(12);
            String name = kind == GpuSpanWriter.KERNEL ? (hasName ? export.string(nameId) : null)
                : kind == GpuSpanWriter.MEMCPY ? NsysExport.memcpyName(rs.getInt(10)) : "Memset";
            int step = -1;
            UnattributedReason reason = noStep;
            if (launched) {
              step = index.find(launchTid, launchStart);
            } else if (anyRanges && writer.stepCount() > 0) {
              reason = UnattributedReason.NO_LAUNCH_RECORD;
            }
            long pid = launched ? NsysExport.pidOf(launchTid) : -1;
            if (pid < 0) {
              long gp = rs.getLong(7);
              pid = rs.wasNull() ? -1 : NsysExport.pidOf(gp);
            }
            writer.activity(kind, start + offset, end + offset, name, device, stream, correlation, bytes, pid,
                launched ? NsysExport.tidOf(launchTid) : -1, step, reason);
            if (++done % PROGRESS_EVERY == 0) {
              progress.update(Math.min(done, total), Math.max(done, total));
            }
          }
        }
      }
      ImportReport report = writer.finish();
      progress.update(done, done);
      return report;
    } catch (SQLException e) {
      throw new InvalidExportException(export.file(), "unreadable Nsight export: " + NsysExport.describe(e), e);
    }
  }
}
