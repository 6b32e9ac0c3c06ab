package dev.llmlat.cli;

import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.gpu.ImportReport;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.imports.ImportRecord;
import dev.llmlat.imports.ImportTarget;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.imports.KafkaImportTarget;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.nvtx.NvtxPattern;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
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
      "written when the file is bad. A file is imported once: its bytes' SHA-256 is recorded, and importing it",
      "again (or re-running an interrupted import) leaves exactly one copy."
    },
    subcommands = {
      ImportCommand.Nsys.class,
      ImportCommand.Kineto.class,
      ImportCommand.CudaEvents.class,
      ImportCommand.OtlpJson.class
    })
final class ImportCommand {
  enum Destination {
    kafka,
    store
  }

  /** Options every import shares. */
  static final class Common {
    @Mixin StoreOptions store;
    @Mixin KafkaOptions kafka;

    @Option(
        names = "--to",
        defaultValue = "kafka",
        description = "kafka (topic otlp_spans) or store. Default: ${DEFAULT-VALUE}.")
    Destination to;

    @Option(
        names = "--nvtx-pattern",
        paramLabel = "PRESET|REGEX",
        defaultValue = "auto",
        description =
            "How range text names trace ids: auto, llmlat, prefill, decode, prefill_trace_id, decode_step, or a regex"
                + " with a named group (?<traces>...). Default: ${DEFAULT-VALUE}.")
    String nvtxPattern;

    @Option(
        names = "--service",
        defaultValue = "llm-engine",
        description = "service.name of the imported spans. Default: ${DEFAULT-VALUE}.")
    String service;

    @Option(
        names = "--host",
        description = "host.name of the imported spans (the host whose clock they are on).")
    String host;
  }

  abstract static class Base implements Callable<Integer> {
    @Mixin Common common;

    @Parameters(paramLabel = "FILE", description = "The export.")
    Path file;

    @Option(
        names = "--force",
        description = {
          "Import the file even though it was imported before. Into the store: the earlier copy",
          "is replaced. To Kafka: published again; rows the ingester already stored from it stay."
        })
    boolean force;

    @Spec CommandSpec spec;

    abstract ExportFormat format();

    @Override
    public Integer call() throws IOException {
      PrintWriter out = spec.commandLine().getOut();
      try {
        dev.llmlat.gpu.GpuImporter.checkReadable(
            file); // missing, a directory, a FIFO, unreadable: each said
      } catch (dev.llmlat.gpu.InvalidExportException e) {
        throw new IllegalArgumentException(e.getMessage(), e);
      }
      ImportOptions options =
          ImportOptions.defaults()
              .withPattern(pattern(common.nvtxPattern))
              .withServiceName(common.service);
      if (common.host != null) {
        options = options.withHostName(common.host);
      }
      // the same bytes are the same import, whatever the file is called now
      ImportedFile imported = ImportedFile.of(file, spec.name(), optionsText());
      ClickHouseStore store = null;
      ImportTarget target = null;
      ImportReport report;
      try {
        if (common.to == Destination.store) {
          store = common.store.openForWriting(); // drops staging tables interrupted imports left
          target = new StoreImportTarget(store, imported, common.store.cluster);
        } else {
          String bootstrap = common.kafka.required();
          Optional<ImportRecord> inStore = storeRecord(imported);
          if (inStore.isPresent() && !force) {
            if (!inStore.get().done()) {
              throw new IllegalStateException(pendingInStore(inStore.get()));
            }
            out.println(alreadyImported(inStore.get(), imported, common.to, storeDescription));
            return 0;
          }
          if (inStore.isPresent() && !inStore.get().ingested()) {
            out.println(
                "--force: publishing; the ingester will not store it, since "
                    + storeDescription
                    + " holds it from an"
                    + " import straight into it ("
                    + when(inStore.get())
                    + "; --to store --force replaces that copy)");
          }
          target =
              new KafkaImportTarget(
                  bootstrap, LlmlatTopics.SPANS, common.kafka.clientProperties(), imported);
        }
        Optional<ImportRecord> earlier = target.earlier();
        if (earlier.isPresent() && earlier.get().done() && !force) {
          out.println(alreadyImported(earlier.get(), imported, common.to, target.description()));
          return 0;
        }
        if (earlier.isPresent()) {
          out.println(replacing(earlier.get(), common.to, target.description()));
        }
        try (ProgressBar bar = Files.size(file) > (64 << 20) ? progressBar() : null) {
          if (bar != null) {
            options =
                options.withProgress(
                    (done, total) -> {
                      bar.maxHint(total);
                      bar.stepTo(done);
                    });
          }
          report = GpuImporter.importFile(file, format(), options, target);
          target.commit();
        }
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

    private String storeDescription = "the store";

    /**
     * What the store's ledger knows of the file, for an import to Kafka: the store it reaches (the
     * services' store process, a server, or an embedded store that exists and is free) may hold it
     * from an import straight into it, or from the ingester. A store that cannot be reached is not
     * asked: the ingester still stores no second copy.
     */
    private Optional<ImportRecord> storeRecord(ImportedFile imported) {
      try {
        dev.llmlat.store.StoreConfig config = common.store.config();
        if (config.kind() == dev.llmlat.store.StoreConfig.Kind.EMBEDDED
            && !StoreDirectory.isStore(config.dataDir())) {
          return Optional
              .empty(); // nothing imported here yet, and no store to make for a Kafka import
        }
        try (ClickHouseStore s = common.store.open()) {
          storeDescription = s.description();
          return new dev.llmlat.ingest.imports.StoreImportLedger(s).find(imported.id());
        }
      } catch (dev.llmlat.store.StoreException e) {
        return Optional
            .empty(); // e.g. the embedded store is held by an ingester: it skips a copy the store
        // has
      }
    }

    /** The options that shape the spans, as the ledger records them. */
    private String optionsText() {
      return "--nvtx-pattern "
          + common.nvtxPattern
          + " --service "
          + common.service
          + (common.host == null ? "" : " --host " + common.host);
    }

    private static ProgressBar progressBar() {
      return new ProgressBarBuilder()
          .setTaskName("import")
          .setStyle(ProgressBarStyle.ASCII)
          .setConsumer(new ConsoleProgressBarConsumer(System.err))
          .setUpdateIntervalMillis(500)
          .build();
    }
  }

  static String alreadyImported(
      ImportRecord done, ImportedFile now, Destination to, String destination) {
    StringBuilder line =
        new StringBuilder(
            now.file().equals(done.file().file())
                ? "already imported"
                : "already imported as " + done.file().file());
    if (done.ingested()) {
      line.append(" into ")
          .append(destination)
          .append(" through Kafka (the ingester began storing it on ")
          .append(when(done))
          .append(')');
    } else {
      line.append(" into ")
          .append(destination)
          .append(" on ")
          .append(when(done))
          .append(" (")
          .append(counts(done))
          .append(')');
    }
    if (!now.options().equals(done.file().options())) {
      line.append(" with ").append(done.file().options());
    }
    return line.append(
            to == Destination.store
                ? ": nothing to do (--force imports it again, replacing that copy)"
                : ": nothing to do (--force publishes it again)")
        .toString();
  }

  static String pendingInStore(ImportRecord pending) {
    return "an import of this file straight into the store began on "
        + when(pending)
        + " and is committing or was interrupted:"
        + " the ingester would not store it from Kafka; re-run it with --to store, which completes it (nothing was published)";
  }

  static String replacing(ImportRecord earlier, Destination to, String destination) {
    if (!earlier.done()) {
      return "an earlier import of this file into "
          + destination
          + " was interrupted ("
          + when(earlier)
          + "): its partial copy is removed as this import commits";
    }
    if (earlier.ingested() && to == Destination.store) {
      return "--force: the copy the ingester stored from Kafka (since "
          + when(earlier)
          + ") is replaced as this import commits";
    }
    return to == Destination.store
        ? "--force: the copy imported on "
            + when(earlier)
            + " ("
            + counts(earlier)
            + ") is replaced as this import commits"
        : "--force: publishing again; rows the ingester stored from the import of "
            + when(earlier)
            + " stay in the store";
  }

  private static String when(ImportRecord r) {
    return DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT)
        .withZone(ZoneOffset.UTC)
        .format(r.at());
  }

  private static String counts(ImportRecord r) {
    return String.format(Locale.ROOT, "%,d spans", r.spans())
        + (r.kernels() > 0 ? String.format(Locale.ROOT, ", %,d kernels", r.kernels()) : "");
  }

  static NvtxPattern pattern(String text) {
    try {
      return NvtxPattern.preset(text);
    } catch (IllegalArgumentException notAPreset) {
      try {
        return NvtxPattern.regex(text);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(
            "--nvtx-pattern '"
                + text
                + "' is neither a preset nor a usable regex: "
                + e.getMessage());
      }
    }
  }

  static void print(ImportReport r, String destination, PrintWriter out) {
    out.printf("imported %s (%s) into %s%n", r.file(), r.format().source(), destination);
    out.printf(
        "  kernels %,d  memcpys %,d  memsets %,d  ranges %,d%n",
        r.kernels(), r.memcpys(), r.memsets(), r.ranges());
    out.printf(
        "  steps matched %,d  requests matched %,d  spans %,d%n",
        r.stepsMatched(), r.requestsMatched(), r.spans());
    out.printf("  clock: %s%n", r.clockRule());
    if (r.unattributedTotal() > 0) {
      out.printf("  not attributed to a request: %,d%n", r.unattributedTotal());
      for (Map.Entry<?, Long> e : r.unattributed().entrySet()) {
        out.printf("    %,d  %s%n", e.getValue(), e.getKey());
      }
    }
    for (dev.llmlat.gpu.ImportWarning w : r.warnings()) {
      out.printf("  warning: %s%n", w.message());
    }
  }

  @Command(
      name = "nsys",
      mixinStandardHelpOptions = true,
      description = "An Nsight Systems export (nsys export --type sqlite).")
  static final class Nsys extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.NSYS_SQLITE;
    }
  }

  @Command(
      name = "kineto",
      mixinStandardHelpOptions = true,
      description = "A PyTorch profiler / Kineto trace (.json or .json.gz).")
  static final class Kineto extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.KINETO_JSON;
    }
  }

  @Command(
      name = "cuda-events",
      mixinStandardHelpOptions = true,
      description = "cudaEvent step timings (JSONL, schemas/formats/gpu-exports.md).")
  static final class CudaEvents extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.CUDA_EVENT_JSONL;
    }
  }

  @Command(
      name = "otlp-json",
      mixinStandardHelpOptions = true,
      description =
          "OTLP/JSON as the Collector's file exporter writes it (one ExportTraceServiceRequest per line, or one document).")
  static final class OtlpJson extends Base {
    @Override
    ExportFormat format() {
      return ExportFormat.OTLP_JSON;
    }
  }
}
