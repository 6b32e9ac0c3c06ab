package dev.llmlat.gpu.internal;

import java.nio.file.Path;
import java.util.List;

/**
 * What one rank's device did that matters across ranks.
 *
 * @param clockDomain ranks of one export share a clock (the file's index): only ranks of different
 *     domains need an estimated offset
 * @param pid the process, -1 when the export does not say (Kineto: one file per rank)
 * @param collectives in start order
 * @param overlapNs time a collective ran while a compute kernel ran on the same device
 */
public record RankTimeline(
    int clockDomain,
    Path file,
    long pid,
    long device,
    List<CollectiveKernel> collectives,
    long overlapNs) {
  public RankTimeline {
    collectives = List.copyOf(collectives);
  }
}
