package dev.llmlat.semconv;

/**
 * Which kernels are collectives between ranks: NCCL's ({@code ncclKernel_*} before 2.19, {@code
 * ncclDevKernel_*} since) and custom all-reduce kernels that bypass NCCL (vLLM's {@code
 * cross_device_reduce_1stage/2stage}). Names may carry a signature ({@code (ncclDevComm*, …)}). One
 * rule for the GPU importer, which summarises collectives, and for attribution, which reads them
 * back from the store to find a late rank.
 */
public final class CollectiveKernels {
  private static final String[] PREFIXES = {
    "ncclKernel_", "ncclDevKernel_", "cross_device_reduce_"
  };

  private CollectiveKernels() {}

  public static boolean matches(String name) {
    if (name == null) {
      return false;
    }
    // Demangled names may carry a return type, a namespace and template arguments
    // (void vllm::cross_device_reduce_1stage<…>(…)): test the bare function name.
    int stop = name.length();
    for (char c : new char[] {'<', '('}) {
      int i = name.indexOf(c);
      if (i >= 0 && i < stop) {
        stop = i;
      }
    }
    int from = Math.max(name.lastIndexOf(' ', stop - 1), name.lastIndexOf(':', stop - 1)) + 1;
    for (String p : PREFIXES) {
      if (name.startsWith(p, from)) {
        return true;
      }
    }
    return false;
  }

  /**
   * A ClickHouse condition on {@code column} that holds for every name {@link #matches} accepts (a
   * prefix after the start, a space or a colon), and for a few more (such a prefix inside template
   * arguments): a filter for the store, whose rows {@link #matches} then decides on.
   */
  public static String sqlSuperset(String column) {
    return "match(" + column + ", '(^|[ :])(" + String.join("|", PREFIXES) + ")')";
  }
}
