package dev.llmlat.gpu;

import java.nio.file.Path;

/**
 * Imports an OTLP/JSON file and prints what arrived: run by {@link OtlpStreamingTest} in a JVM of
 * its own with a small heap. Prints {@code spans=N batches=B maxBatch=M warnings=W}.
 */
public final class OtlpStreamingMain {
  private OtlpStreamingMain() {}

  public static void main(String[] args) throws Exception {
    long[] maxBatch = new long[1];
    long[] spans = new long[1];
    ImportReport r =
        GpuImporter.importFile(
            Path.of(args[0]),
            ExportFormat.OTLP_JSON,
            ImportOptions.defaults().withBatchSize(Integer.parseInt(args[1])),
            b -> {
              maxBatch[0] = Math.max(maxBatch[0], b.spanCount());
              spans[0] += b.spanCount();
            });
    System.out.println(
        "spans="
            + spans[0]
            + " reported="
            + r.spans()
            + " batches="
            + r.batches()
            + " maxBatch="
            + maxBatch[0]
            + " warnings="
            + r.warnings().size());
  }
}
