package dev.llmlat.cli;

import dev.llmlat.gpu.GpuSummary;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.store.QueryResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "gpu-summary",
    mixinStandardHelpOptions = true,
    description = {
      "GPU time of an Nsight, Kineto or cudaEvent export: busy, idle, streams, top kernels.",
      "Total, busy (union of kernel, memcpy and memset intervals), computation, memcpy and idle time, counts,",
      "per-stream and top-kernel tables.",
      "Definitions follow TraceLens's GPU timeline; names and streams follow pipit's Nsight reader."
    })
final class GpuSummaryCommand implements Callable<Integer> {
  enum Format { text, json }

  @Parameters(paramLabel = "FILE", description = "The export.")
  Path file;

  @Option(names = "--format", defaultValue = "text", description = "text or json. Default: ${DEFAULT-VALUE}.")
  Format format;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    try {
      dev.llmlat.gpu.GpuImporter.checkReadable(file); // missing, a directory, a FIFO, unreadable: each said
    } catch (dev.llmlat.gpu.InvalidExportException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    GpuSummary s;
    try {
      s = GpuSummary.of(file);
    } catch (InvalidExportException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (format == Format.json) {
      out.println(s.toJson());
      out.flush();
      return 0;
    }
    out.printf("%s (%s)%n", s.file(), s.format().source());
    out.printf("  total %.3f ms  busy %.3f ms (%.1f%%)  computation %.3f ms  memcpy %.3f ms  idle %.3f ms%n", s.totalNs() / 1e6,
        s.busyNs() / 1e6, s.totalNs() == 0 ? 0 : 100.0 * s.busyNs() / s.totalNs(), s.computationNs() / 1e6, s.memcpyNs() / 1e6,
        s.idleNs() / 1e6);
    out.printf("  kernels %,d  memcpys %,d  memsets %,d%n%n", s.kernels(), s.memcpys(), s.memsets());
    List<List<String>> streams = new ArrayList<>();
    for (GpuSummary.StreamSummary st : s.streams()) {
      streams.add(List.of(Long.toString(st.device()), Long.toString(st.stream()), Long.toString(st.kernels()),
          Long.toString(st.memcpys()), Long.toString(st.memsets()), String.format("%.3f", st.busyNs() / 1e6)));
    }
    ResultPrinter.print(new QueryResult(List.of(col("device", "UInt32"), col("stream", "UInt32"), col("kernels", "UInt64"),
        col("memcpys", "UInt64"), col("memsets", "UInt64"), col("busy_ms", "Float64")), streams), ResultPrinter.Format.table, out);
    out.println();
    List<List<String>> kernels = new ArrayList<>();
    for (GpuSummary.KernelTime k : s.topKernels()) {
      kernels.add(List.of(k.name(), Long.toString(k.count()), String.format("%.3f", k.totalNs() / 1e6)));
    }
    ResultPrinter.print(new QueryResult(List.of(col("kernel", "String"), col("count", "UInt64"), col("total_ms", "Float64")), kernels),
        ResultPrinter.Format.table, out);
    return 0;
  }

  private static QueryResult.Column col(String name, String type) {
    return new QueryResult.Column(name, type);
  }
}
