package dev.llmlat.gpu.internal;

import dev.llmlat.nvtx.NvtxPattern;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An Nsight export's steps for collectives: NVTX ranges that name a step (any preset pattern, or
 * {@code ProfilerStep#N}), found through the runtime call that launched the kernel (same
 * correlation id and process) on the thread that had the range open, as the importer joins them;
 * {@code ProfilerStep#N} spans its whole process (see {@link KinetoSteps}).
 */
final class NsysSteps {
  private NsysSteps() {}

  static RankCollector.StepResolver read(NsysExport export) throws SQLException {
    RangeIndex byThread = new RangeIndex();
    RangeIndex byProcess = new RangeIndex();
    List<StepKey> keys = new ArrayList<>();
    if (export.has(NsysExport.NVTX)) {
      Map<List<Object>, Integer> seen = new HashMap<>(); // (pid, text) -> ranges so far: ordered by start
      try (PreparedStatement ps = export.ranges(); ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String text = rs.getString(4);
          if (!isStep(text)) {
            continue;
          }
          long thread = rs.getLong(3);
          int occurrence = seen.merge(List.of(NsysExport.pidOf(thread), text), 1, Integer::sum) - 1;
          if (RankCollector.PROFILER_STEP.matcher(text).matches()) {
            byProcess.add(NsysExport.pidOf(thread), rs.getLong(1), rs.getLong(2), keys.size());
          } else {
            byThread.add(thread, rs.getLong(1), rs.getLong(2), keys.size());
          }
          keys.add(new StepKey(text, occurrence));
        }
      }
    }
    if (keys.isEmpty()) {
      return (correlation, globalPid) -> null;
    }
    long[] rowids = export.has(NsysExport.RUNTIME) ? export.rowidRange(NsysExport.RUNTIME) : new long[2];
    LaunchCalls calls = LaunchCalls.read(export, rowids[0], rowids[1]);
    return (correlation, globalPid) -> {
      if (correlation == ActivityCursor.NONE || globalPid == ActivityCursor.NONE) {
        return null;
      }
      long call = LaunchCalls.find(calls, null, correlation, globalPid >> 24);
      if (call < 0) {
        return null;
      }
      long thread = LaunchCalls.thread(calls, null, call);
      long at = LaunchCalls.start(calls, null, call);
      int step = byThread.find(thread, at);
      if (step < 0) {
        step = byProcess.find(NsysExport.pidOf(thread), at);
      }
      return step < 0 ? null : keys.get(step);
    };
  }

  static boolean isStep(String text) {
    return text != null && (NvtxPattern.AUTO.match(text).isPresent() || RankCollector.PROFILER_STEP.matcher(text).matches());
  }
}
