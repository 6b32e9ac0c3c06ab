package dev.llmlat.cli;

import dev.llmlat.bench.IngestBenchmark;
import dev.llmlat.home.EngineLibrary;
import dev.llmlat.home.LlmlatHome;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = "Benchmarks that print their figures next to a baseline measured in the same run.",
    subcommands = BenchCommand.Ingest.class)
final class BenchCommand {

  @Command(name = "ingest", mixinStandardHelpOptions = true, description = {
      "End-to-end spans/s (produce -> broker -> ingester -> store) and, on the same spans in the same run,",
      "the store's raw insert rate and the broker's raw consume rate, with the ratios.",
      "Uses a scratch broker and store under $LLMLAT_HOME/tmp, removed afterwards."})
  static final class Ingest implements Callable<Integer> {
    @Option(names = "--spans", defaultValue = "500000", description = "Spans to push through. Default: ${DEFAULT-VALUE}.")
    int spans;

    @Option(names = "--partitions", defaultValue = "1", description = "Partitions of the bench topics. Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      Path scratch = LlmlatHome.fromEnvironment().root().resolve("tmp").resolve("bench-ingest-" + ProcessHandle.current().pid());
      new IngestBenchmark(spans, partitions, scratch, EngineLibrary.locate()).run(spec.commandLine().getOut());
      return 0;
    }
  }
}
