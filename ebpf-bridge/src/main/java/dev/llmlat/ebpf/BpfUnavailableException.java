package dev.llmlat.ebpf;

/**
 * BPF cannot run here: bpftrace is not installed, or the kernel refused to load or attach the
 * program (not root / no CAP_BPF+CAP_PERFMON, lockdown, no uprobe support).
 */
public final class BpfUnavailableException extends EbpfBridgeException {
  private static final long serialVersionUID = 1L;

  public BpfUnavailableException(String message) {
    super(message);
  }

  public BpfUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
