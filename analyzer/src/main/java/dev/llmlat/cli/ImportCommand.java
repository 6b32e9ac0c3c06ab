package dev.llmlat.cli;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.gpu.NvtxPattern;
import dev.llmlat.imports.ImportTarget;
import dev.llmlat.imports.KafkaImportTarget;
import dev.llmlat.imports.StoreImportTarget;
import dev.llmlat.kafka.SpanTopics;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "import",
    mixinStandardHelpOptions = true,
    description = {
      "Imports a GPU or trace export as OTLP spans on the requests' trace ids.",
      "To Kafka (default, one transaction) or straight into the store (--to store). Nothing is published or",
      "written when the file is bad."
    },
    subcommands = {ImportCommand.Nsys.class, ImportCommand.Kineto.class, ImportCommand.CudaEvents.class, ImportCommand.OtlpJson.class})
final class ImportCommand {
  enum Destination { kafka, store }

  /** Options every import shares. */
  static final class Common {
    @Mixin StoreOptions store;
    @Mixin KafkaOptions kafka;

    @Option(names = "--to", defaultValue = "kafka", description = "kafka (topic otlp_spans) or store. Default: ${DEFAULT-VALUE}.")
    Destination to;

    @Option(names = "--nvtx-pattern", paramLabel = "PRESET|REGEX", defaultValue = "auto",
        description = "How range text names trace ids: auto, llmlat, prefill, decode, prefill_trace_id, decode_step, or a regex"
            + " with a named group (?<traces>...). Default: ${DEFAULT-VALUE}.")
    String nvtxPattern;

    @Option(names = "--service", defaultValue = "llm-engine", description = "service.name of the imported spans. Default: ${DEFAULT-VALUE}.")
    String service;

    @Option(names = "--host", description = "host.name of the imported spans (the host whose clock they are on).")
    String host;
  }

  abstract static class Base implements Callable<Integer> {
    @Mixin Common common;

    @Parameters(paramLabel = "FILE", description = "The export.")
    Path file;

    @Spec CommandSpec spec;

    abstract ExportFormat format();

    @Override
    public Integer call() throws IOException {
      PrintWriter out = spec.commandLine().getOut();
      if (!Files.isRegularFile(file)) {
        throw new IllegalArgumentException(file + ": no such file");
      }
      ImportOptions options = ImportOptions.defaults().withPattern(pattern(common.nvtxPattern)).withServiceName(common.service);
      if (common.host != null) {
        options = options.withHostName(common.host);
      }
      ClickHouseStore store = null;
      ImportTarget target = null;
      ImportReport report;
      try (ProgressBar bar = Files.size(file) > (64 << 20) ? progressBar() : null) {
        if (bar != null) {
          options = options.withProgress((done, total) -> {
            bar.maxHint(total);
            bar.stepTo(done);
          });
        }
        if (common.to == Destination.store) {
          store = common.store.open();
          target = new StoreImportTarget(store);
        } else {
          target = new KafkaImportTarget(common.kafka.required(), SpanTopics.SPANS, common.kafka.clientProperties());
        }
        report = GpuImporter.importFile(file, format(), options, target);
        target.commit();
      } catch (InvalidExportException e) {
        throw new IllegalArgumentException(e.getMessage() + " (nothing was imported)", e);
      } finally {
        if (target != null) {
          target.close();
        }
        if (store != null) {
          store.close();
        }
      }
      print(report, target.description(), out);
      return 0;
    }

    private static ProgressBar progressBar() {
      return new ProgressBarBuilder().setTaskName("import").setStyle(ProgressBarStyle.ASCII)
          .setConsumer(new ConsoleProgressBarConsumer(System.err)).setUpdateIntervalMillis(500).build();
    }
  }

  static NvtxPattern pattern(String text) {
    try {
      return NvtxPattern.preset(text);
    } catch (IllegalArgumentException notAPreset) {
      try {
        return NvtxPattern.regex(text);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("--nvtx-pattern '" + text + "' is neither a preset nor a usable regex: " + e.getMessage());
      }
    }
  }

  static void print(ImportReport r, String destination, PrintWriter out) {
    out.printf("imported %s (%s) into %s%n", r.file(), r.format().source(), destination);
    out.printf("  kernels %,d  memcpys %,d  memsets %,d  ranges %,d%n", r.kernels(), r.memcpys(), r.memsets(), r.ranges());
    out.printf("  steps matched %,d  requests matched %,d  spans %,d%n", r.stepsMatched(), r.requestsMatched(), r.spans());
    out.printf("  clock: %s%n", r.clockRule());
    if (r.unattributedTotal() > 0) {
      out.printf("  not attributed to a request: %,d%n", r.unattributedTotal());
      for (Map.Entry<?, Long> e : r.unattributed().entrySet()) {
        out.printf("    %,d  %s%n", e.getValue(), e.getKey());
      }
    }
  }

  @Command(name = "nsys", mixinStandardHelpOptions = true, description = "An Nsight Systems export (nsys export --type sqlite).")
  static final class Nsys extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.NSYS_SQLITE;
    }
  }

  @Command(name = "kineto", mixinStandardHelpOptions = true, description = "A PyTorch profiler / Kineto trace (.json or .json.gz).")
  static final class Kineto extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.KINETO_JSON;
    }
  }

  @Command(name = "cuda-events", mixinStandardHelpOptions = true, description = "cudaEvent step timings (JSONL, schemas/formats/gpu-exports.md).")
  static final class CudaEvents extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.CUDA_EVENT_JSONL;
    }
  }

  @Command(name = "otlp-json", mixinStandardHelpOptions = true,
      description = "OTLP/JSON as the Collector's file exporter writes it (one ExportTraceServiceRequest per line, or one document).")
  static final class OtlpJson extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.OTLP_JSON;
    }
  }
}
