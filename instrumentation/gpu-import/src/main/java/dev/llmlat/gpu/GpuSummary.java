package dev.llmlat.gpu;

import dev.llmlat.gpu.internal.Summaries;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * A GPU timeline's figures, defined as AMD TraceLens's {@code GPUEventAnalyser} defines them over
 * the GPU activities (kernels, memcpys, memsets — of every device and stream together):
 *
 * <ul>
 *   <li>{@code total}: last activity end − first activity start;
 *   <li>{@code busy}: length of the union of all activity intervals;
 *   <li>{@code computation}: union of kernels and memsets, NCCL kernels excepted;
 *   <li>{@code communication}: union of kernels whose name contains {@code nccl};
 *   <li>{@code memcpy}: union of memcpy intervals;
 *   <li>{@code idle} = total − busy.
 * </ul>
 *
 * Names and per-stream grouping follow pipit's Nsight reader (kernel short names, device + stream).
 * cudaEvent exports know only step brackets: each step counts as one computation interval.
 *
 * @param streams per device and stream, ordered by device then stream
 * @param topKernels kernel names by summed duration, largest first (at most 20)
 */
public record GpuSummary(
    Path file,
    ExportFormat format,
    long totalNs,
    long busyNs,
    long computationNs,
    long communicationNs,
    long memcpyNs,
    long idleNs,
    long kernels,
    long memcpys,
    long memsets,
    List<StreamSummary> streams,
    List<KernelTime> topKernels) {

  public GpuSummary {
    streams = List.copyOf(streams);
    topKernels = List.copyOf(topKernels);
  }

  /**
   * One stream's share: counts, union of its activities, its first start and last end (Unix ns).
   */
  public record StreamSummary(
      long device,
      long stream,
      long kernels,
      long memcpys,
      long memsets,
      long busyNs,
      long firstStartNs,
      long lastEndNs) {}

  /** A kernel name's count and summed duration. */
  public record KernelTime(String name, long count, long totalNs) {}

  /** Summarizes any supported export (format detected from content). */
  public static GpuSummary of(Path file) throws IOException {
    return of(file, ExportFormat.detect(file), ImportProgress.NONE);
  }

  public static GpuSummary of(Path file, ExportFormat format, ImportProgress progress)
      throws IOException {
    return Summaries.summarize(file, format, progress);
  }

  /**
   * {@code
   * {"total_ms":…,"busy_ms":…,"computation_ms":…,"memcpy_ms":…,"idle_ms":…,"kernels":…,"memcpys":…}}
   * with milliseconds to the nanosecond.
   */
  public String toJson() {
    return String.format(
        Locale.ROOT,
        "{\"total_ms\":%s,\"busy_ms\":%s,\"computation_ms\":%s,\"memcpy_ms\":%s,\"idle_ms\":%s,"
            + "\"kernels\":%d,\"memcpys\":%d}",
        ms(totalNs),
        ms(busyNs),
        ms(computationNs),
        ms(memcpyNs),
        ms(idleNs),
        kernels,
        memcpys);
  }

  static String ms(long ns) {
    return new java.math.BigDecimal(ns).movePointLeft(6).stripTrailingZeros().toPlainString();
  }
}
