package dev.llmlat.gpu;

import dev.llmlat.nvtx.NvtxPattern;
import java.util.Objects;

/**
 * How to import: which range texts are steps, the resource the spans carry, batch size, progress.
 * Immutable; start from {@link #defaults()} and use the {@code with...} methods.
 *
 * @param pattern reads steps out of range text ({@link NvtxPattern#AUTO} by default)
 * @param serviceName {@code service.name} of the emitted resource ({@code llmlat-gpu} by default)
 * @param hostName {@code host.name} of the emitted resource, or {@code null} to leave it out
 * @param batchSize the most spans in one {@code ExportTraceServiceRequest} (1000 by default)
 * @param progress told how far the import has come
 */
public record ImportOptions(
    NvtxPattern pattern,
    String serviceName,
    String hostName,
    int batchSize,
    ImportProgress progress) {
  public static final int DEFAULT_BATCH_SIZE = 1000;

  public ImportOptions {
    Objects.requireNonNull(pattern, "pattern");
    Objects.requireNonNull(serviceName, "serviceName");
    Objects.requireNonNull(progress, "progress");
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
    }
  }

  public static ImportOptions defaults() {
    return new ImportOptions(
        NvtxPattern.AUTO, "llmlat-gpu", null, DEFAULT_BATCH_SIZE, ImportProgress.NONE);
  }

  public ImportOptions withPattern(NvtxPattern pattern) {
    return new ImportOptions(pattern, serviceName, hostName, batchSize, progress);
  }

  public ImportOptions withServiceName(String serviceName) {
    return new ImportOptions(pattern, serviceName, hostName, batchSize, progress);
  }

  public ImportOptions withHostName(String hostName) {
    return new ImportOptions(pattern, serviceName, hostName, batchSize, progress);
  }

  public ImportOptions withBatchSize(int batchSize) {
    return new ImportOptions(pattern, serviceName, hostName, batchSize, progress);
  }

  public ImportOptions withProgress(ImportProgress progress) {
    return new ImportOptions(pattern, serviceName, hostName, batchSize, progress);
  }
}
