package dev.llmlat.ebpf;

/**
 * One line of probe output, times in bpftrace {@code nsecs} (CLOCK_MONOTONIC ns). {@code tid} is
 * the kernel thread id (what {@code gettid()} returns in the target), {@code pid} its process.
 */
public sealed interface ProbeEvent {
  long pid();

  long tid();

  long monoNs();

  /**
   * A kernel or graph launch entered. {@code function} is the host stub address (runtime) or
   * CUfunction handle (driver).
   */
  record Launch(
      long pid,
      long tid,
      long monoNs,
      String api,
      long function,
      int[] grid,
      int[] block,
      long sharedMemBytes,
      long stream)
      implements ProbeEvent {
    public boolean driver() {
      return api.startsWith("cu") && !api.startsWith("cuda");
    }

    public boolean graph() {
      return api.contains("GraphLaunch");
    }
  }

  /** A synchronisation call returned: it waited from {@code monoNs} to {@code endMonoNs}. */
  record Sync(
      long pid, long tid, long monoNs, long endMonoNs, String api, long handle, int returnCode)
      implements ProbeEvent {}

  /**
   * Bytes [{@code offset}, offset + text length) of the next range's text; {@code total} 0 when
   * unknown.
   */
  record TextChunk(long pid, long tid, long monoNs, int offset, int total, String text)
      implements ProbeEvent {}

  /** A thread-scoped range was pushed; its text came in the {@link TextChunk}s just before. */
  record Push(long pid, long tid, long monoNs, int total) implements ProbeEvent {}

  record Pop(long pid, long tid, long monoNs) implements ProbeEvent {}

  /** A process-scoped range started; its text came in the {@link TextChunk}s just before. */
  record Start(long pid, long tid, long monoNs, long id, int total) implements ProbeEvent {}

  record End(long pid, long tid, long monoNs, long id) implements ProbeEvent {}
}
