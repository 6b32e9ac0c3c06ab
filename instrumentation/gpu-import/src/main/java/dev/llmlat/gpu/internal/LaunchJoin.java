package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.UnattributedReason;

/**
 * Joins a GPU activity to the runtime call that launched it (same correlation id, same process) and
 * that call to the innermost matched range open on its thread when it was made. The result of the
 * last {@link #join} is in the fields, so that a few hundred thousand joins allocate nothing.
 */
final class LaunchJoin {
  private final LaunchCalls first;
  private final LaunchCalls later;
  private final RangeIndex index;
  private final UnattributedReason noStep;
  private final UnattributedReason noLaunch;

  /** The step index, or -1. */
  int step;

  /** Why there is no step (when {@link #step} is -1). */
  UnattributedReason reason;

  /** The launching process, or -1 when unknown. */
  long pid;

  /** The launching thread, or -1 when unknown. */
  long tid;

  /**
   * @param first runtime calls of the earlier rowids
   * @param later those of the later rowids
   * @param noStep the reason given when the launching thread had no matching range open
   * @param noLaunch the reason given when no launch call is found
   */
  LaunchJoin(
      LaunchCalls first,
      LaunchCalls later,
      RangeIndex index,
      UnattributedReason noStep,
      UnattributedReason noLaunch) {
    this.first = first;
    this.later = later;
    this.index = index;
    this.noStep = noStep;
    this.noLaunch = noLaunch;
  }

  /**
   * @param correlation and {@code globalPid}: the activity's, {@link ActivityCursor#NONE} when NULL
   */
  void join(long correlation, long globalPid) {
    boolean hasPid = globalPid != ActivityCursor.NONE;
    long call =
        hasPid && correlation != ActivityCursor.NONE
            ? LaunchCalls.find(first, later, correlation, globalPid >> 24)
            : -1;
    if (call >= 0) {
      long thread = LaunchCalls.thread(first, later, call);
      step = index.find(thread, LaunchCalls.start(first, later, call));
      reason = noStep;
      pid = NsysExport.pidOf(thread);
      tid = NsysExport.tidOf(thread);
    } else {
      step = -1;
      reason = noLaunch;
      pid = hasPid ? NsysExport.pidOf(globalPid) : -1;
      tid = -1;
    }
  }
}
