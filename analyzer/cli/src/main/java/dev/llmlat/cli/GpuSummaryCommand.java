package dev.llmlat.cli;

import dev.llmlat.gpu.CollectiveSummary;
import dev.llmlat.gpu.GpuSummaries;
import dev.llmlat.gpu.GpuSummary;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.store.QueryResult;
import java.io.IOException;
import java.io.PrintWriter;
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
      "Definitions follow TraceLens's GPU timeline; names and streams follow pipit's Nsight reader.",
      "Several ranks (one Nsight export of all processes, or one Kineto trace per rank): per device collective",
      "time, wait (latest start among ranks - own start, the k-th collective of a step on each rank), own time",
      "(shortest duration among ranks), compute/communication overlap, and the straggler of each step."
    })
final class GpuSummaryCommand implements Callable<Integer> {
  enum Format {
    text,
    json
  }

  @Parameters(
      paramLabel = "FILE",
      arity = "1..*",
      description = "The export; several: the ranks of one run.")
  List<Path> files;

  @Option(
      names = "--format",
      defaultValue = "text",
      description = "text or json. Default: ${DEFAULT-VALUE}.")
  Format format;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    for (Path file : files) {
      try {
        dev.llmlat.gpu.GpuImporter.checkReadable(
            file); // missing, a directory, a FIFO, unreadable: each said
      } catch (dev.llmlat.gpu.InvalidExportException e) {
        throw new IllegalArgumentException(e.getMessage(), e);
      }
    }
    GpuSummaries all;
    try {
      all = GpuSummaries.of(files);
    } catch (InvalidExportException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (format == Format.json) {
      out.println(all.toJson());
      out.flush();
      return 0;
    }
    for (int i = 0; i < all.files().size(); i++) {
      if (i > 0) {
        out.println();
      }
      print(all.files().get(i), out);
    }
    if (all.collectives() != null) {
      out.println();
      print(all.collectives(), out);
    }
    if (all.kvTransfers() != null) {
      out.println();
      out.print(all.kvTransfers().toText());
    }
    out.flush(); // print() does not flush, and the process may end by halt
    return 0;
  }

  private static void print(GpuSummary s, PrintWriter out) {
    out.printf("%s (%s)%n", s.file(), s.format().source());
    out.printf(
        "  total %.3f ms  busy %.3f ms (%.1f%%)  computation %.3f ms  memcpy %.3f ms  idle %.3f ms%n",
        s.totalNs() / 1e6,
        s.busyNs() / 1e6,
        s.totalNs() == 0 ? 0 : 100.0 * s.busyNs() / s.totalNs(),
        s.computationNs() / 1e6,
        s.memcpyNs() / 1e6,
        s.idleNs() / 1e6);
    out.printf(
        "  kernels %,d  memcpys %,d  memsets %,d%n%n", s.kernels(), s.memcpys(), s.memsets());
    List<List<String>> streams = new ArrayList<>();
    for (GpuSummary.StreamSummary st : s.streams()) {
      streams.add(
          List.of(
              Long.toString(st.device()),
              Long.toString(st.stream()),
              Long.toString(st.kernels()),
              Long.toString(st.memcpys()),
              Long.toString(st.memsets()),
              String.format("%.3f", st.busyNs() / 1e6)));
    }
    ResultPrinter.print(
        new QueryResult(
            List.of(
                col("device", "UInt32"),
                col("stream", "UInt32"),
                col("kernels", "UInt64"),
                col("memcpys", "UInt64"),
                col("memsets", "UInt64"),
                col("busy_ms", "Float64")),
            streams),
        ResultPrinter.Format.table,
        out);
    out.println();
    List<List<String>> kernels = new ArrayList<>();
    for (GpuSummary.KernelTime k : s.topKernels()) {
      kernels.add(
          List.of(k.name(), Long.toString(k.count()), String.format("%.3f", k.totalNs() / 1e6)));
    }
    ResultPrinter.print(
        new QueryResult(
            List.of(col("kernel", "String"), col("count", "UInt64"), col("total_ms", "Float64")),
            kernels),
        ResultPrinter.Format.table,
        out);
  }

  /** Steps listed in text, those with the most delay first; JSON lists every step. */
  private static final int STEPS_SHOWN = 20;

  private static void print(CollectiveSummary c, PrintWriter out) {
    out.printf(
        "collectives across %d devices: %,d matched (k-th collective of a step on each rank)%n",
        c.ranks().size(), c.matched());
    List<List<String>> devices = new ArrayList<>();
    for (CollectiveSummary.RankCollectives r : c.ranks()) {
      devices.add(
          List.of(
              Integer.toString(r.rank()),
              Long.toString(r.device()),
              r.pid() < 0 ? "" : Long.toString(r.pid()),
              Long.toString(r.collectives()),
              Long.toString(r.matched()),
              ms(r.collectiveNs()),
              ms(r.ownNs()),
              ms(r.waitNs()),
              ms(r.overlapNs()),
              ms(r.clockOffsetNs()),
              r.file() == null ? "" : String.valueOf(r.file().getFileName())));
    }
    ResultPrinter.print(
        new QueryResult(
            List.of(
                col("rank", "UInt32"),
                col("device", "UInt32"),
                col("pid", "String"),
                col("collectives", "UInt64"),
                col("matched", "UInt64"),
                col("collective_ms", "Float64"),
                col("own_ms", "Float64"),
                col("wait_ms", "Float64"),
                col("overlap_ms", "Float64"),
                col("clock_offset_ms", "Float64"),
                col("file", "String")),
            devices),
        ResultPrinter.Format.table,
        out);
    out.println();
    List<CollectiveSummary.StepStraggler> steps = new ArrayList<>(c.steps());
    steps.sort(
        java.util.Comparator.comparingLong(CollectiveSummary.StepStraggler::lateNs)
            .reversed()
            .thenComparingInt(CollectiveSummary.StepStraggler::index));
    List<CollectiveSummary.StepStraggler> shown =
        steps.subList(0, Math.min(STEPS_SHOWN, steps.size()));
    out.printf(
        "stragglers: %d of %d steps, the most delayed first (the rank whose collectives started last;"
            + " late = its lead over the earliest, summed)%n",
        shown.size(), steps.size());
    List<List<String>> rows = new ArrayList<>();
    for (CollectiveSummary.StepStraggler s : shown) {
      String name =
          s.name() == null
              ? "(outside steps)"
              : s.name() + (s.occurrence() > 0 ? " #" + (s.occurrence() + 1) : "");
      rows.add(
          List.of(
              Integer.toString(s.index()),
              s.straggler() < 0 ? "" : Integer.toString(s.straggler()),
              ms(s.lateNs()),
              Integer.toString(s.collectives()),
              name.length() > 72 ? name.substring(0, 69) + "..." : name));
    }
    ResultPrinter.print(
        new QueryResult(
            List.of(
                col("step", "UInt32"),
                col("straggler", "String"),
                col("late_ms", "Float64"),
                col("collectives", "UInt32"),
                col("name", "String")),
            rows),
        ResultPrinter.Format.table,
        out);
  }

  private static String ms(long ns) {
    return String.format("%.3f", ns / 1e6);
  }

  private static QueryResult.Column col(String name, String type) {
    return new QueryResult.Column(name, type);
  }
}
