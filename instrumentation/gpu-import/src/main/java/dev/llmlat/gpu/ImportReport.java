package dev.llmlat.gpu;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What an import did.
 *
 * @param file the export read
 * @param format its format
 * @param kernels kernel spans emitted
 * @param memcpys memcpy spans emitted
 * @param memsets memset spans emitted
 * @param ranges CPU ranges in the export (NVTX push/pop and start/end ranges, user annotations)
 * @param stepsMatched ranges whose text matched the pattern; one GPU step span each
 * @param requestsMatched distinct request trace ids named by matched ranges
 * @param unattributed GPU activities imported without a step, by reason (reasons with zero left
 *     out)
 * @param clockRule how timestamps became Unix ns (the {@code llmlat.clock.rule} value)
 * @param spans spans emitted in all (steps + activities, or the OTLP file's spans)
 * @param batches {@code ExportTraceServiceRequest}s handed to the sink
 * @param warnings what was imported although not quite right, counted (empty when all was well)
 */
public record ImportReport(
    Path file,
    ExportFormat format,
    long kernels,
    long memcpys,
    long memsets,
    long ranges,
    long stepsMatched,
    long requestsMatched,
    Map<UnattributedReason, Long> unattributed,
    String clockRule,
    long spans,
    long batches,
    List<ImportWarning> warnings) {
  public ImportReport {
    unattributed = Map.copyOf(unattributed);
    warnings = List.copyOf(warnings);
  }

  /** A report without warnings. */
  public ImportReport(
      Path file,
      ExportFormat format,
      long kernels,
      long memcpys,
      long memsets,
      long ranges,
      long stepsMatched,
      long requestsMatched,
      Map<UnattributedReason, Long> unattributed,
      String clockRule,
      long spans,
      long batches) {
    this(
        file,
        format,
        kernels,
        memcpys,
        memsets,
        ranges,
        stepsMatched,
        requestsMatched,
        unattributed,
        clockRule,
        spans,
        batches,
        List.of());
  }

  /** GPU activities imported without a step, all reasons together. */
  public long unattributedTotal() {
    return unattributed.values().stream().mapToLong(Long::longValue).sum();
  }
}
