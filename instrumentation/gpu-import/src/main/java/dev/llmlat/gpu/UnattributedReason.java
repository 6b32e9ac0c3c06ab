package dev.llmlat.gpu;

import dev.llmlat.nvtx.NvtxPattern;

/** Why a GPU activity was imported without a step (it then gets a trace id of its own). */
public enum UnattributedReason {
  /** The export holds no CPU ranges at all (profiled without {@code -t nvtx}, no annotations). */
  NO_RANGES_IN_EXPORT,
  /** The export has ranges, but no range text matched the {@link NvtxPattern}. */
  NO_RANGE_MATCHED_PATTERN,
  /**
   * No CUDA runtime/driver call carries the activity's correlation id, so its launching thread is
   * unknown.
   */
  NO_LAUNCH_RECORD,
  /** The launching call ran on a thread and at a time no matching range covers (e.g. warm-up). */
  LAUNCHED_OUTSIDE_MATCHING_RANGE
}
