package dev.llmlat.gpu.internal;

/**
 * One collective kernel of a rank, in that rank's clock; {@code step} null when launched outside
 * any step.
 */
public record CollectiveKernel(StepKey step, long startNs, long endNs, String name) {
  public long durationNs() {
    return endNs - startNs;
  }
}
