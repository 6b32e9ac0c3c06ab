package dev.llmlat.cli;

import dev.llmlat.ebpf.BpftraceFailedException;
import dev.llmlat.ebpf.BridgeOptions;
import dev.llmlat.ebpf.BridgeSummary;
import dev.llmlat.ebpf.EbpfBridge;
import dev.llmlat.ebpf.EbpfBridgeException;
import dev.llmlat.ebpf.NvtxInjection;
import dev.llmlat.ebpf.TargetProcessNotFoundException;
import dev.llmlat.imports.ImportTarget;
import dev.llmlat.imports.KafkaImportTarget;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.ClickHouseStore;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "ebpf",
    mixinStandardHelpOptions = true,
    description =
        "Always-on CUDA launch, synchronisation and NVTX timelines from uprobes (bpftrace), on the requests' trace ids.",
    subcommands = EbpfCommand.Run.class)
final class EbpfCommand {

  @Command(
      name = "run",
      mixinStandardHelpOptions = true,
      description = {
        "Probes a running process (--pid) or starts one (--command) under bpftrace: launches grouped into step spans on the",
        "trace ids the open NVTX range names, synchronisation waits as spans; publishes to Kafka (--to store: the store).",
        "Runs until the target exits, --duration passes, or SIGTERM; then prints what it saw."
      })
  static final class Run implements Callable<Integer> {
    static final class Target {
      @Option(
          names = "--pid",
          required = true,
          description = "A running process using the CUDA runtime.")
      long pid;

      @Option(
          names = "--command",
          required = true,
          description = "A command to start under the probes (split on spaces).")
      String command;
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Target target;

    @Mixin ImportCommand.Common common;

    @Option(
        names = "--runtime-lib",
        paramLabel = "PATH",
        description = "libcudart to probe (default: discovered).")
    Path runtimeLibrary;

    @Option(
        names = "--duration",
        paramLabel = "DURATION",
        description = "Stop after this long (e.g. 30s); default: until the target exits.")
    String duration;

    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      BridgeOptions.Builder options =
          BridgeOptions.builder()
              .pattern(ImportCommand.pattern(common.nvtxPattern))
              .serviceName(common.service);
      if (target.command != null) {
        // NVTX v3 is header-only: the injection library gives its ranges an entry point to probe
        Path injection =
            NvtxInjection.build(
                LlmlatHome.fromEnvironment().root().resolve("cache").resolve("nvtx"));
        options.command(target.command).nvtxInjection(injection);
      } else {
        options.pid(target.pid);
      }
      if (runtimeLibrary != null) {
        options.runtimeLibrary(runtimeLibrary);
      }
      ClickHouseStore store = null;
      ImportTarget sink = null;
      try {
        if (common.to == ImportCommand.Destination.store) {
          store = common.store.openForWriting();
          sink = new StoreImportTarget(store);
        } else {
          sink = new KafkaImportTarget(common.kafka.required(), LlmlatTopics.SPANS);
        }
        BridgeSummary summary;
        String failure = null;
        try (EbpfBridge bridge = EbpfBridge.start(options.build(), sink)) {
          dev.llmlat.runtime.process.ExitSequence.register(
              "stopping the eBPF probes", bridge::stop, 10_000);
          out.printf(
              "probing with %d uprobes (bpftrace pid %d); spans to %s%n",
              bridge.attachedProbes(), bridge.bpftraceProcess().pid(), sink.description());
          out.flush();
          try {
            summary =
                duration == null
                    ? bridge.awaitCompletion(Duration.ofDays(3650))
                    : awaitOrStop(bridge, Durations.parse(duration));
          } catch (BpftraceFailedException e) {
            summary = e.summary();
            failure = e.getMessage();
          }
        }
        sink.commit(); // spans read before a failure are delivered too
        out.println(summary.describe());
        if (failure != null) {
          spec.commandLine().getErr().println("llmlat ebpf: " + failure);
          return Llmlat.EXIT_FAILURE;
        }
        return 0;
      } catch (TargetProcessNotFoundException e) {
        throw new IllegalArgumentException(e.getMessage(), e);
      } catch (EbpfBridgeException e) {
        spec.commandLine().getErr().println("llmlat ebpf: " + e.getMessage());
        return Llmlat.EXIT_FAILURE;
      } finally {
        if (sink != null) {
          sink.close();
        }
        if (store != null) {
          store.close();
        }
      }
    }

    private static BridgeSummary awaitOrStop(EbpfBridge bridge, Duration limit) {
      try {
        return bridge.awaitCompletion(limit);
      } catch (BpftraceFailedException e) {
        throw e;
      } catch (EbpfBridgeException stillRunning) {
        return bridge.stop();
      }
    }
  }
}
