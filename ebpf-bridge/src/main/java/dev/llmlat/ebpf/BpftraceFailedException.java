package dev.llmlat.ebpf;

/**
 * bpftrace exited on its own with an error (or was killed) while the bridge was reading it. Every
 * span built from the events read before that was delivered to the sink; {@link #summary()} counts
 * them.
 */
public final class BpftraceFailedException extends EbpfBridgeException {
  private static final long serialVersionUID = 1L;
  private final int exitCode;
  private final transient BridgeSummary summary;

  public BpftraceFailedException(int exitCode, String stderrTail, BridgeSummary summary) {
    super(
        "bpftrace died mid-run with exit code "
            + exitCode
            + describe(exitCode)
            + " after "
            + summary.launches()
            + " launches; stderr: "
            + stderrTail);
    this.exitCode = exitCode;
    this.summary = summary;
  }

  private static String describe(int exitCode) {
    return exitCode > 128 ? " (signal " + (exitCode - 128) + ")" : "";
  }

  public int exitCode() {
    return exitCode;
  }

  public BridgeSummary summary() {
    return summary;
  }
}
