package dev.llmlat.ebpf;

/** Attribute names only the eBPF layer writes (the shared ones are in LlmlatAttributes). */
public final class EbpfAttributes {
  private EbpfAttributes() {}

  /** Launches (runtime + driver) on the thread inside the range. */
  public static final String LAUNCHES = "llmlat.ebpf.launches";

  public static final String DRIVER_LAUNCHES = "llmlat.ebpf.driver_launches";
  public static final String FIRST_LAUNCH = "llmlat.ebpf.first_launch_unix_nano";
  public static final String LAST_LAUNCH = "llmlat.ebpf.last_launch_unix_nano";

  /** Synchronisation waits on the thread inside the range: count and total ns. */
  public static final String SYNCS = "llmlat.ebpf.syncs";

  public static final String SYNC_NS = "llmlat.ebpf.sync_ns";

  /** The range was still open when the bridge stopped: the span ends at the last event seen. */
  public static final String TRUNCATED = "llmlat.ebpf.truncated";

  /** {@code push} (thread-scoped) or {@code start} (process-scoped). */
  public static final String RANGE_SCOPE = "llmlat.ebpf.range";

  // On launch events and sync spans
  public static final String API = "llmlat.ebpf.api";
  public static final String KERNEL = "llmlat.ebpf.kernel";
  public static final String FUNCTION = "llmlat.ebpf.function";
  public static final String GRID = "llmlat.ebpf.grid";
  public static final String BLOCK = "llmlat.ebpf.block";
  public static final String SHARED_MEM = "llmlat.ebpf.shared_mem_bytes";
  public static final String HANDLE = "llmlat.ebpf.handle";
  public static final String RETURN_CODE = "llmlat.ebpf.return_code";
}
