package dev.llmlat.gpu.internal;

import dev.llmlat.nvtx.NvtxPattern;
import dev.llmlat.nvtx.RangeMatch;
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
 * {@code ProfilerStep#N} spans its whole process (see {@link KinetoSteps}). A KV transfer's send
 * and receive ranges get one key ({@link #keyName}), so that its kernels pair up across ranks.
 */
final class NsysSteps {
  private NsysSteps() {}

  /**
   * The resolver, and the export's KV-transfer ranges (Unix ns) by the key their kernels resolve
   * to.
   */
  record Read(RankCollector.StepResolver steps, List<KvRange> transfers) {}

  static Read read(NsysExport export, int clockDomain) throws SQLException {
    RangeIndex byThread = new RangeIndex();
    RangeIndex byProcess = new RangeIndex();
    List<StepKey> keys = new ArrayList<>();
    List<KvRange> transfers = new ArrayList<>();
    long offset = export.epochOffsetNs();
    if (export.has(NsysExport.NVTX)) {
      Map<List<Object>, Integer> seen =
          new HashMap<>(); // (pid, key name) -> ranges so far: ordered by start
      try (PreparedStatement ps = export.ranges();
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String text = rs.getString(4);
          if (!isStep(text)) {
            continue;
          }
          long thread = rs.getLong(3);
          String name = keyName(text);
          int occurrence = seen.merge(List.of(NsysExport.pidOf(thread), name), 1, Integer::sum) - 1;
          StepKey key = new StepKey(name, occurrence);
          RangeMatch kv = kvTransfer(text);
          if (kv != null) {
            transfers.add(
                new KvRange(
                    clockDomain,
                    NsysExport.pidOf(thread),
                    key,
                    kv.kind(),
                    kv.traceIds().get(0),
                    rs.getLong(1) + offset,
                    rs.getLong(2) + offset));
          }
          if (RankCollector.PROFILER_STEP.matcher(text).matches()) {
            byProcess.add(NsysExport.pidOf(thread), rs.getLong(1), rs.getLong(2), keys.size());
          } else {
            byThread.add(thread, rs.getLong(1), rs.getLong(2), keys.size());
          }
          keys.add(key);
        }
      }
    }
    if (keys.isEmpty()) {
      return new Read((correlation, globalPid) -> null, transfers);
    }
    long[] rowids =
        export.has(NsysExport.RUNTIME) ? export.rowidRange(NsysExport.RUNTIME) : new long[2];
    LaunchCalls calls = LaunchCalls.read(export, rowids[0], rowids[1]);
    return new Read(
        (correlation, globalPid) -> {
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
        },
        transfers);
  }

  /** A KV-transfer range's match, or null when the text is none. */
  static RangeMatch kvTransfer(String text) {
    RangeMatch m = NvtxPattern.AUTO.match(text).orElse(null);
    return m != null && m.isKvTransfer() ? m : null;
  }

  /**
   * The name a range's kernels are matched by across ranks: its text, except that both sides of a
   * KV transfer are {@code kv <trace id>} (the k-th transfer of a request on the sender and the
   * receiver is one transfer).
   */
  static String keyName(String text) {
    RangeMatch kv = kvTransfer(text);
    return kv == null ? text : "kv " + kv.traceIds().get(0);
  }

  static boolean isStep(String text) {
    return text != null
        && (NvtxPattern.AUTO.match(text).isPresent()
            || RankCollector.PROFILER_STEP.matcher(text).matches());
  }
}
