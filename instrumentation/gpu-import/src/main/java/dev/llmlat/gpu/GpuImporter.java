package dev.llmlat.gpu;

import dev.llmlat.gpu.internal.CudaEventLog;
import dev.llmlat.gpu.internal.GpuSpanWriter;
import dev.llmlat.gpu.internal.Inputs;
import dev.llmlat.gpu.internal.KinetoImporter;
import dev.llmlat.gpu.internal.NsysExport;
import dev.llmlat.gpu.internal.NsysImporter;
import dev.llmlat.gpu.internal.OtlpImporter;
import dev.llmlat.nvtx.NvtxPattern;
import dev.llmlat.otlpkafka.SpanSink;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Imports a GPU export as OTLP spans (the contract of schemas/kafka/README.md): one {@code step}
 * span per range whose text matches the {@link NvtxPattern}, linked to every request trace it
 * served, and one span per kernel, memcpy and memset, parented to its step. Spans reach the {@link
 * SpanSink} in batches as they are produced; memory stays bounded by the number of steps and launch
 * records, not by the file.
 *
 * <pre>{@code
 * ImportReport r = GpuImporter.importFile(Path.of("run.sqlite"), ImportOptions.defaults(), kafkaSink);
 * }</pre>
 */
public final class GpuImporter {
  private GpuImporter() {}

  /** Detects the format from the file's content, then imports it. */
  public static ImportReport importFile(Path file, ImportOptions options, SpanSink sink)
      throws IOException {
    return importFile(file, ExportFormat.detect(file), options, sink);
  }

  /**
   * Imports {@code file} as {@code format}.
   *
   * @throws InvalidExportException when the file is not a readable export of that format; the shape
   *     is checked before the first batch is emitted (a sqlite page that is corrupt deep inside the
   *     file can only be found while reading it)
   */
  public static ImportReport importFile(
      Path file, ExportFormat format, ImportOptions options, SpanSink sink) throws IOException {
    Inputs.checkReadable(file); // before anything reads its size
    switch (format) {
      case NSYS_SQLITE:
        try (NsysExport export = NsysExport.open(file)) {
          return NsysImporter.run(export, options, sink);
        }
      case KINETO_JSON:
        return KinetoImporter.run(file, options, sink);
      case CUDA_EVENT_JSONL:
        return importCudaEvents(file, options, sink);
      case OTLP_JSON:
        return OtlpImporter.run(file, options, sink);
      default:
        throw new IllegalArgumentException(format.toString());
    }
  }

  /**
   * Refuses a path that is no readable regular file, saying which: missing (and whether its
   * directory is), a directory, a FIFO or other special file (imports read a file twice), not
   * readable. {@link #importFile} checks this first; a caller may check it before opening targets.
   */
  public static void checkReadable(Path file) throws InvalidExportException {
    Inputs.checkReadable(file);
  }

  private static ImportReport importCudaEvents(Path file, ImportOptions options, SpanSink sink)
      throws IOException {
    long size = Files.size(file);
    // Validate every line first: a bad line fails the file before anything is emitted.
    CudaEventLog.scan(file, options.progress(), 0, 2 * size, step -> {});
    GpuSpanWriter writer =
        new GpuSpanWriter(
            file,
            ExportFormat.CUDA_EVENT_JSONL,
            options,
            sink,
            CudaEventLog.RULE,
            "cudaevent|" + file.getFileName() + "|" + size,
            true);
    CudaEventLog.scan(
        file,
        options.progress(),
        size,
        2 * size,
        step -> writer.bracketStep(step.match(), step.startNs(), step.endNs()));
    ImportReport report = writer.finish();
    options.progress().update(2 * size, 2 * size);
    return report;
  }
}
