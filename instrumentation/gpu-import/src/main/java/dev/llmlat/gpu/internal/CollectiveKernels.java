package dev.llmlat.gpu.internal;

/**
 * Which kernels are collectives between ranks: NCCL's ({@code ncclKernel_*} before 2.19,
 * {@code ncclDevKernel_*} since) and custom all-reduce kernels that bypass NCCL (vLLM's
 * {@code cross_device_reduce_1stage/2stage}). Names may carry a signature ({@code (ncclDevComm*, …)}).
 */
public final class CollectiveKernels {
  private static final String[] PREFIXES = {"ncclKernel_", "ncclDevKernel_", "cross_device_reduce_"};

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
}
