package dev.llmlat.ebpf;

/** {@code --pid} names no running process (or one this user cannot see). */
public final class TargetProcessNotFoundException extends EbpfBridgeException {
  private static final long serialVersionUID = 1L;
  private final long pid;

  public TargetProcessNotFoundException(long pid) {
    super("no process with pid " + pid + " (it exited, or /proc/" + pid + " is not visible here)");
    this.pid = pid;
  }

  public long pid() {
    return pid;
  }
}
