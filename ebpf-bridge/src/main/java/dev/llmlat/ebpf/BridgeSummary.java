package dev.llmlat.ebpf;

/**
 * What one bridge run saw.
 *
 * @param launches kernel and graph launches (runtime and driver)
 * @param driverLaunches of those, launches through the driver API ({@code cuLaunchKernel} ...)
 * @param synchronizations completed synchronisation waits
 * @param nvtxRanges closed NVTX ranges (push/pop and start/end, any text)
 * @param stepRanges of those, ranges whose text names request traces
 * @param attributedLaunches launches inside a step range
 * @param spans spans delivered to the sink
 * @param malformedLines probe output lines that could not be read (counted, not fatal)
 * @param lostEvents events bpftrace reported lost (its per-CPU buffers overflowed): the counts
 *     above miss them
 * @param exitCode bpftrace's exit code, or -1 when it was stopped by {@link EbpfBridge#close()}
 */
public record BridgeSummary(
    long launches,
    long driverLaunches,
    long synchronizations,
    long nvtxRanges,
    long stepRanges,
    long attributedLaunches,
    long spans,
    long malformedLines,
    long lostEvents,
    int exitCode) {

  /** One line for people: {@code launches=.. synchronizations=.. nvtx_ranges=..}. */
  public String describe() {
    return "launches="
        + launches
        + " (driver "
        + driverLaunches
        + ", in steps "
        + attributedLaunches
        + ")"
        + " synchronizations="
        + synchronizations
        + " nvtx_ranges="
        + nvtxRanges
        + " (steps "
        + stepRanges
        + ")"
        + " spans="
        + spans
        + (malformedLines > 0 ? " malformed_lines=" + malformedLines : "")
        + (lostEvents > 0 ? " lost_events=" + lostEvents : "");
  }
}
