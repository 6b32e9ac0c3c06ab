package dev.llmlat.bench;

import dev.llmlat.bench.faults.FaultResult;
import dev.llmlat.bench.faults.FaultsBenchmark;
import dev.llmlat.bench.faults.FaultsConfig;
import dev.llmlat.cli.Durations;
import dev.llmlat.cli.Llmlat;
import dev.llmlat.cli.PluggedCommand;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.runtime.home.LlmlatHome;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description =
        "Benchmarks that print their figures next to a baseline measured in the same run.",
    subcommands = {
      BenchCommand.Ingest.class,
      BenchCommand.Agent.class,
      BenchCommand.AgentPool.class,
      BenchCommand.Import.class,
      BenchCommand.Analyze.class,
      BenchCommand.Retain.class,
      BenchCommand.Live.class,
      BenchCommand.Soak.class,
      BenchCommand.Faults.class,
      BenchCommand.Cli.class
    })
public final class BenchCommand implements PluggedCommand {
  public BenchCommand() {}

  @Command(
      name = "ingest",
      mixinStandardHelpOptions = true,
      description = {
        "End-to-end spans/s (produce -> broker -> ingester -> store) and, on the same spans in the same run,",
        "the store's raw insert rate and the broker's raw consume rate, with the ratios.",
        "Uses a scratch broker and store under $LLMLAT_HOME/tmp, removed afterwards."
      })
  static final class Ingest implements Callable<Integer> {
    @Option(
        names = "--spans",
        defaultValue = "500000",
        description = "Spans to push through. Default: ${DEFAULT-VALUE}.")
    int spans;

    @Option(
        names = "--partitions",
        defaultValue = "1",
        description = "Partitions of the bench topics. Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-ingest-" + ProcessHandle.current().pid());
      new IngestBenchmark(spans, partitions, scratch, EngineLibrary.locate())
          .run(spec.commandLine().getOut());
      return 0;
    }
  }

  @Command(
      name = "cli",
      mixinStandardHelpOptions = true,
      description = {
        "Wall time of sql, explain, report and gpu-summary as a user runs them (the launcher, a new process each time)",
        "on a small store in a scratch home under $LLMLAT_HOME/tmp (removed afterwards), against --version as the floor:",
        "the first run on the build (cold), then medians with the command's AOT cache and without it (LLMLAT_AOT=off);",
        "on the embedded store, then with `llmlat services up`. Run it through ./llmlat."
      })
  static final class Cli implements Callable<Integer> {
    @Option(
        names = "--runs",
        defaultValue = "7",
        description = "Runs of each command and mode. Default: ${DEFAULT-VALUE}.")
    int runs;

    @Option(
        names = "--requests",
        defaultValue = "200",
        description = "Generated requests in the store. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(
        names = "--gpu-export",
        paramLabel = "FILE",
        description =
            "The export gpu-summary reads. Default: the H200 Nsight capture in ../shared/traces/h200-e2e next to the checkout.")
    Path gpuExport;

    @Option(names = "--no-services", description = "Only the embedded store.")
    boolean noServices;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      String launcher = System.getProperty("llmlat.launcher");
      if (launcher == null) {
        throw new IllegalArgumentException(
            "run it through the launcher (./llmlat bench cli): it measures the launcher itself");
      }
      if (runs < 1 || requests < 1) {
        throw new IllegalArgumentException("--runs and --requests must be at least 1");
      }
      Path export = gpuExport;
      if (export == null) {
        Path capture =
            Path.of(launcher)
                .toAbsolutePath()
                .getParent()
                .resolve("../shared/traces/h200-e2e/engine.sqlite")
                .normalize();
        export = java.nio.file.Files.isRegularFile(capture) ? capture : null;
      } else if (!java.nio.file.Files.isRegularFile(export)) {
        throw new IllegalArgumentException("--gpu-export " + export + ": no such file");
      }
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-cli-" + ProcessHandle.current().pid());
      new CliBenchmark(
              new CliBenchmark.Config(
                  Path.of(launcher), scratch, runs, requests, export, !noServices))
          .run(spec.commandLine().getOut());
      return 0;
    }
  }

  @Command(
      name = "soak",
      mixinStandardHelpOptions = true,
      description = {
        "Sustained ingest at a target rate for --minutes with every service on this machine (broker, store process,",
        "ingester process, as `llmlat services up` runs them, in a scratch home under $LLMLAT_HOME/tmp, removed afterwards).",
        "Prints, every --sample-seconds: produced and stored spans/s, end-to-end lag p50/p99 (a marker span's end -> a query",
        "finds it), the ingester's live heap after a full GC; then a summary. Exits 1 when the heap grew (the rule is",
        "printed) or a span was lost or stored twice."
      })
  static final class Soak implements Callable<Integer> {
    @Option(
        names = "--minutes",
        required = true,
        description = "How long to produce (fractions allowed).")
    double minutes;

    @Option(
        names = "--rate",
        defaultValue = "10000",
        description = "Target spans/s. Default: ${DEFAULT-VALUE}.")
    int rate;

    @Option(
        names = "--sample-seconds",
        defaultValue = "10",
        description = "Seconds per row. Default: ${DEFAULT-VALUE}.")
    int sampleSeconds;

    @Option(
        names = "--partitions",
        defaultValue = "3",
        description = "Partitions of otlp_spans. Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      if (!(minutes > 0) || minutes > 24 * 60) {
        throw new IllegalArgumentException(
            "--minutes must be more than 0 and at most 1440, got " + minutes);
      }
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-soak-" + ProcessHandle.current().pid());
      SoakBenchmark.Result result =
          new SoakBenchmark(
                  new SoakBenchmark.Config(
                      Duration.ofMillis((long) (minutes * 60_000)),
                      rate,
                      Duration.ofSeconds(sampleSeconds),
                      partitions,
                      scratch))
              .run(spec.commandLine().getOut());
      if (!result.trend().flat() || result.lostOrDuplicated()) {
        spec.commandLine()
            .getErr()
            .println(
                "llmlat bench soak: "
                    + (result.lostOrDuplicated()
                        ? "spans were lost or stored twice"
                        : "the ingester's heap grew (" + HeapTrend.RULE + ")"));
        return Llmlat.EXIT_FAILURE;
      }
      return 0;
    }
  }

  @Command(
      name = "agent",
      mixinStandardHelpOptions = true,
      description = {
        "Gateway request latency p50/p99 and throughput with no agent, the vanilla OpenTelemetry agent exporting nothing and",
        "exporting OTLP to a live receiver, the agent with llmlat's extension exporting to Kafka, with the broker down, and",
        "the extension's hooks without export; then the same relay on Reactor Netty (the server and client of Spring WebFlux",
        "and Spring Cloud Gateway) under the exporting vanilla agent and under the extension with Kafka; all eight gateways",
        "in one run, interleaved rounds after a long warm-up; the extension's overhead against the exporting vanilla agent on",
        "each stack. The Reactor Netty gateway comes from the agent extension module's build (./llmlat builds it); without",
        "it the run says so and measures the JDK gateway only."
      })
  static final class Agent implements Callable<Integer> {
    @Option(
        names = "--requests",
        defaultValue = "400",
        description = "Requests per mode per round. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(
        names = "--rounds",
        defaultValue = "5",
        description = "Interleaved rounds. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(
        names = "--concurrency",
        defaultValue = "4",
        description = "Concurrent clients. Default: ${DEFAULT-VALUE}.")
    int concurrency;

    @Option(
        names = "--warmup",
        defaultValue = "30000",
        description = {
          "Requests through each gateway before measuring, so that JIT compilation of the request and export paths is",
          "over before the rounds (with 6,000, C2 was still busy through the rounds). Default: ${DEFAULT-VALUE}."
        })
    int warmup;

    @Option(
        names = "--rate",
        defaultValue = "0",
        description = {
          "Requests/s of the paced latency batches (open loop: latency on a gateway that is not saturated). 0: a quarter",
          "of the slowest gateway's throughput at the end of the warm-up. Default: ${DEFAULT-VALUE}."
        })
    double rate;

    @Option(
        names = "--gateway-cpus",
        defaultValue = "auto",
        paramLabel = "auto|none|LIST",
        description = {
          "CPUs for the gateways (taskset list like 1 or 2-3); the load generator, upstream, broker and OTLP receiver get the",
          "rest, as when the gateway has its own cores and exports to other machines. auto: the upper half of the CPUs",
          "(unpinned with fewer than two or without taskset); none: no pinning. Default: ${DEFAULT-VALUE}."
        })
    String gatewayCpus;

    @Option(
        names = "--max-steal",
        defaultValue = "5",
        paramLabel = "PERCENT",
        description = {
          "The overhead estimates are printed again over the rounds in which the hypervisor took at most this share of the",
          "machine's CPU time (steal in /proc/stat) during both compared batches. Default: ${DEFAULT-VALUE}."
        })
    double maxStealPercent;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-agent-" + ProcessHandle.current().pid());
      CpuPinning pinning =
          switch (gatewayCpus) {
            case "auto" -> CpuPinning.halves().orElse(null);
            case "none" -> null;
            default -> CpuPinning.of(gatewayCpus);
          };
      new AgentBenchmark(
              requests, rounds, concurrency, warmup, rate, scratch, pinning, maxStealPercent / 100)
          .run(spec.commandLine().getOut());
      return 0;
    }
  }

  @Command(
      name = "agent-pool",
      mixinStandardHelpOptions = true,
      description = {
        "The extension's overhead over the rounds of several `llmlat bench agent` runs taken together, read from their",
        "saved output: median of the per-round paired p50 ratios, bootstrap 95% interval resampling rounds within each run."
      })
  static final class AgentPool implements Callable<Integer> {
    @Parameters(
        arity = "1..*",
        paramLabel = "OUTPUT",
        description = "Saved output of llmlat bench agent, one file per run.")
    List<Path> outputs;

    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      List<AgentRounds> runs = new ArrayList<>();
      for (Path f : outputs) {
        runs.add(AgentRounds.read(f));
      }
      PrintWriter out = spec.commandLine().getOut();
      out.printf(
          "%d rounds from %d run%s%n",
          runs.stream().mapToInt(AgentRounds::size).sum(),
          runs.size(),
          runs.size() == 1 ? "" : "s");
      for (AgentBenchmark.Comparison c : AgentBenchmark.COMPARISONS) {
        List<double[]> ratios = new ArrayList<>();
        for (AgentRounds run : runs) {
          try {
            ratios.add(run.ratios(c.mode(), c.baseline()));
          } catch (IllegalArgumentException e) {
            // a run without these modes: one that found no Reactor Netty gateway, or from before it
            // was measured
          }
        }
        if (ratios.isEmpty()) {
          out.printf("%s against %s: in none of these runs%n", c.mode(), c.baseline());
        } else {
          out.printf(
              "%s against %s: %s%s%n",
              c.mode(),
              c.baseline(),
              PairedRatio.of(ratios).asChange(),
              ratios.size() < runs.size()
                  ? " (" + ratios.size() + " of " + runs.size() + " runs)"
                  : "");
        }
      }
      out.flush();
      return 0;
    }
  }

  @Command(
      name = "import",
      mixinStandardHelpOptions = true,
      description = {
        "Kernels/s of the Nsight importer on a large export made by replicating a real one, against a raw SELECT of the",
        "same kernel table with sqlite-jdbc in the same run, with the ratio: each import between two raw scans, with",
        "sqlite-jdbc's defaults and with the importer's own connection settings (read-only, multi-thread mode).",
        "With --tp N: a TP-N export made from a real tensor-parallel capture (its ranks' processes replicated into N",
        "rank processes on devices 0..N-1, each a little later than the one before, the same NVTX steps) against the",
        "single-GPU path of the same size (rank 0 alone, repeated to as many kernels), imports alternating."
      })
  static final class Import implements Callable<Integer> {
    @Parameters(
        paramLabel = "NSYS_SQLITE",
        description = {
          "The export to replicate (e.g. ../shared/traces/h200-tinylm/nsys/nsys_b.sqlite;",
          "with --tp, a tensor-parallel capture such as ../shared/traces/h200x2-tp/tp.sqlite)."
        })
    Path export;

    @Option(
        names = "--copies",
        description =
            "How many times to replicate it (with --tp: time copies of the TP export). Default: 40, with --tp 4.")
    Integer copies;

    @Option(
        names = "--tp",
        paramLabel = "N",
        description = "Compare a TP-N export with the single-GPU path instead of a raw scan.")
    Integer tp;

    @Option(
        names = "--rounds",
        defaultValue = "20",
        description = "Measured rounds. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(
        names = "--warmup",
        defaultValue = "12",
        description = {
          "Rounds run first and left out of the medians (the JIT"
              + " compiles the importer for about a dozen rounds of a 40-copy export). Default: ${DEFAULT-VALUE}."
        })
    int warmup;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      if (!java.nio.file.Files.isRegularFile(export)) {
        throw new IllegalArgumentException(export + ": no such file");
      }
      if (rounds < 1 || warmup < 0) {
        throw new IllegalArgumentException("--rounds must be at least 1 and --warmup at least 0");
      }
      if (tp != null) {
        new TensorParallelImportBenchmark(
                new TensorParallelRuns(export, tp, copies == null ? 4 : copies, rounds, warmup))
            .run(spec.commandLine().getOut());
        return 0;
      }
      ImportBenchmark.main(
          new String[] {
            export.toString(),
            Integer.toString(copies == null ? 40 : copies),
            Integer.toString(rounds),
            Integer.toString(warmup)
          });
      return 0;
    }
  }

  @Command(
      name = "analyze",
      mixinStandardHelpOptions = true,
      description = {
        "Requests attributed per second from the store (synthetic three-layer requests) against a plain SELECT of the",
        "same spans in the same run, then the latency of one `llmlat explain` on a store grown to --explain-spans.",
        "With --tp N: kernels/s of attributing a TP-N export's requests (made as `bench import --tp` makes it, with the",
        "capture's engine requests from requests.jsonl beside it) against the single-GPU path of the same size, in one",
        "store, runs alternating."
      })
  static final class Analyze implements Callable<Integer> {
    @Option(
        names = "--requests",
        defaultValue = "100000",
        description = "Requests to attribute. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(
        names = "--explain-spans",
        defaultValue = "10000000",
        description = "Spans in the store for the explain latency. Default: ${DEFAULT-VALUE}.")
    long explainSpans;

    @Option(
        names = "--tp",
        paramLabel = "N",
        description = "Compare a TP-N export with the single-GPU path instead.")
    Integer tp;

    @Parameters(
        arity = "0..1",
        paramLabel = "NSYS_SQLITE",
        description = {
          "With --tp: the tensor-parallel capture to replicate.",
          "Default: ../shared/traces/h200x2-tp/tp.sqlite next to the checkout."
        })
    Path capture;

    @Option(
        names = "--copies",
        defaultValue = "4",
        description = "With --tp: time copies of the TP export. Default: ${DEFAULT-VALUE}.")
    int copies;

    @Option(
        names = "--rounds",
        defaultValue = "10",
        description = "With --tp: measured rounds. Default: ${DEFAULT-VALUE}.")
    int rounds;

    @Option(
        names = "--warmup",
        defaultValue = "2",
        description = "With --tp: rounds left out of the medians. Default: ${DEFAULT-VALUE}.")
    int warmup;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws Exception {
      var parsed = spec.commandLine().getParseResult();
      if (tp == null) {
        for (String o : List.of("--copies", "--rounds", "--warmup")) {
          if (parsed.hasMatchedOption(o)) {
            throw new IllegalArgumentException(o + " is an option of --tp");
          }
        }
        if (capture != null) {
          throw new IllegalArgumentException(capture + ": an export is read only with --tp");
        }
      } else {
        for (String o : List.of("--requests", "--explain-spans")) {
          if (parsed.hasMatchedOption(o)) {
            throw new IllegalArgumentException(
                o + " does not apply with --tp (the capture's requests are attributed)");
          }
        }
      }
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-analyze-" + ProcessHandle.current().pid());
      if (tp != null) {
        new TensorParallelAnalyzeBenchmark(
                new TensorParallelRuns(tensorParallelCapture(capture), tp, copies, rounds, warmup),
                scratch,
                EngineLibrary.locate())
            .run(spec.commandLine().getOut());
        return 0;
      }
      new dev.llmlat.bench.AnalyzeBenchmark(requests, explainSpans, scratch, EngineLibrary.locate())
          .run(spec.commandLine().getOut());
      return 0;
    }
  }

  /**
   * The given capture, or the real TP capture in ../shared/traces next to the checkout the launcher
   * runs from.
   */
  private static Path tensorParallelCapture(Path given) {
    Path file = given;
    if (file == null) {
      String launcher = System.getProperty("llmlat.launcher");
      Path root =
          launcher == null
              ? Path.of("").toAbsolutePath()
              : Path.of(launcher).toAbsolutePath().getParent();
      file = root.resolve("../shared/traces/h200x2-tp/tp.sqlite").normalize();
    }
    if (!java.nio.file.Files.isRegularFile(file)) {
      throw new IllegalArgumentException(
          file + ": no such file (give the tensor-parallel capture to replicate)");
    }
    return file;
  }

  @Command(
      name = "retain",
      mixinStandardHelpOptions = true,
      description = {
        "Stored bytes per request before and after `llmlat retain` (synthetic three-layer requests, attributed in the",
        "same run, parts merged before each measure), and how fast retention decides."
      })
  static final class Retain implements Callable<Integer> {
    @Option(
        names = "--requests",
        defaultValue = "50000",
        description = "Requests in the store. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(
        names = "--slo-ttft",
        defaultValue = "500",
        paramLabel = "MS",
        description = "Keep requests over it. Default: ${DEFAULT-VALUE}.")
    double sloMs;

    @Option(
        names = "--keep-slowest",
        defaultValue = "1",
        paramLabel = "PCT",
        description = "Default: ${DEFAULT-VALUE}.")
    double keepSlowestPct;

    @Option(
        names = "--keep-rate",
        defaultValue = "0.01",
        description = "Default: ${DEFAULT-VALUE}.")
    double keepRate;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException {
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-retain-" + ProcessHandle.current().pid());
      dev.llmlat.retention.RetentionPolicy policy =
          new dev.llmlat.retention.RetentionPolicy(
              java.time.Duration.ofHours(1),
              Math.round(sloMs * 1e6),
              keepSlowestPct / 100,
              keepRate);
      new RetentionBenchmark(requests, policy, scratch, EngineLibrary.locate())
          .run(spec.commandLine().getOut());
      return 0;
    }
  }

  @Command(
      name = "live",
      mixinStandardHelpOptions = true,
      description = {
        "Live attribution (`llmlat attribute --live`), one instance: requests/s attributed from a backlog on the topic,",
        "against `analyze` on the same spans in the same run; then the lag from a request's last span (acknowledged by",
        "the broker) to its row at a steady rate, p50 and p99 (the grace included). A scratch broker and store under",
        "$LLMLAT_HOME/tmp, removed afterwards."
      })
  static final class Live implements Callable<Integer> {
    @Option(
        names = "--requests",
        defaultValue = "20000",
        description = "Requests in the backlog. Default: ${DEFAULT-VALUE}.")
    int requests;

    @Option(
        names = "--rate",
        defaultValue = "200",
        description = "Requests/s of the steady phase. Default: ${DEFAULT-VALUE}.")
    int rate;

    @Option(
        names = "--seconds",
        defaultValue = "20",
        description = "Length of the steady phase. Default: ${DEFAULT-VALUE}.")
    int seconds;

    @Option(
        names = "--grace",
        paramLabel = "DURATION",
        defaultValue = "1s",
        description = "The attributor's grace. Default: ${DEFAULT-VALUE}.")
    String grace;

    @Option(
        names = "--partitions",
        defaultValue = "3",
        description = "Partitions of the span topic. Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-live-" + ProcessHandle.current().pid());
      new LiveBenchmark(
              new LiveBenchmark.Config(
                  requests,
                  rate,
                  Duration.ofSeconds(seconds),
                  Durations.parse(grace),
                  partitions,
                  scratch,
                  EngineLibrary.locate()))
          .run(spec.commandLine().getOut());
      return 0;
    }
  }

  @Command(
      name = "faults",
      mixinStandardHelpOptions = true,
      description = {
        "Faults with real processes: the ingester SIGKILLed during a stream, the store down, the broker restarted under a",
        "gateway (agent + extension) and importers, a read-only / full data directory, fuzzed records on otlp_spans.",
        "One line per scenario, then `spans=N lost=N duplicated=N dlq=N`; exit 1 if anything was lost or duplicated.",
        "Scenarios: ingester-kill, store-outage, broker-restart, disk, fuzz."
      })
  static final class Faults implements Callable<Integer> {
    @Option(
        names = "--only",
        split = ",",
        paramLabel = "NAME",
        description = "Run only these scenarios (comma-separated).")
    List<String> only = List.of();

    @Option(
        names = "--seed",
        description = "Seed for kill points, spans and fuzzed records. Default: the time.")
    Long seed;

    @Option(
        names = "--spans",
        defaultValue = "1000000",
        description =
            "Spans streamed while the ingester is killed (a tenth for the store outage). Default: ${DEFAULT-VALUE}.")
    int spans;

    @Option(
        names = "--kills",
        defaultValue = "10",
        description = "SIGKILLs of the ingester. Default: ${DEFAULT-VALUE}.")
    int kills;

    @Option(
        names = "--outage",
        defaultValue = "60s",
        description =
            "How long the store, then the broker, stay down (e.g. 60s, 2m). Default: ${DEFAULT-VALUE}.")
    String outage;

    @Option(
        names = "--fuzz-records",
        defaultValue = "100000",
        description = "Random and mutated records. Default: ${DEFAULT-VALUE}.")
    int fuzzRecords;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      Path scratch =
          LlmlatHome.fromEnvironment()
              .root()
              .resolve("tmp")
              .resolve("bench-faults-" + ProcessHandle.current().pid());
      Duration down;
      try {
        down = Durations.parse(outage);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--outage: " + e.getMessage());
      }
      FaultsConfig config =
          new FaultsConfig(
              new LinkedHashSet<>(only),
              seed == null ? System.currentTimeMillis() : seed,
              spans,
              kills,
              down,
              fuzzRecords,
              scratch);
      List<FaultResult> results = new FaultsBenchmark(config).run(spec.commandLine().getOut());
      return results.stream().allMatch(FaultResult::passed) ? 0 : Llmlat.EXIT_FAILURE;
    }
  }
}
