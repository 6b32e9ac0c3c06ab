package dev.llmlat.cli;

import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.report.PerfettoExport;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "export",
    mixinStandardHelpOptions = true,
    description = "Exports aligned timelines for other tools.",
    subcommands = ExportCommand.Perfetto.class)
final class ExportCommand {

  @Command(
      name = "perfetto",
      mixinStandardHelpOptions = true,
      description = {
        "A request's aligned multi-layer timeline (or every span of a time window) as Chrome-trace JSON that",
        "ui.perfetto.dev and chrome://tracing open: a process per layer, the TTFT attribution as its own track."
      })
  static final class Perfetto implements Callable<Integer> {
    static final class What {
      @Parameters(paramLabel = "TRACE_ID", description = "One request's trace id.")
      String traceId;

      @Option(
          names = "--since",
          paramLabel = "DURATION",
          description = "Every span of the last DURATION instead (e.g. 5m).")
      String since;
    }

    @Mixin StoreOptions store;

    @ArgGroup(exclusive = true, multiplicity = "1")
    What what;

    @Option(
        names = {"-o", "--output"},
        required = true,
        paramLabel = "FILE",
        description = "The JSON file to write.")
    Path output;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException {
      // Before the store is read: a path that cannot be written fails at once (exit 2).
      OutputFile file = OutputFile.check("--output", output);
      int[] spans = new int[1];
      try (ClickHouseStore s = store.open()) {
        Analyzer analyzer = new Analyzer(s);
        file.write(
            out -> {
              if (what.traceId != null) {
                Analyzer.Explained e = analyzer.explainWithSpans(what.traceId);
                PerfettoExport.write(e.spans(), e.attribution(), out);
                spans[0] = e.spans().size();
              } else {
                long now = System.currentTimeMillis() * 1_000_000L;
                var window = analyzer.window(now - Durations.parse(what.since).toNanos(), now);
                PerfettoExport.write(window, null, out);
                spans[0] = window.size();
              }
            });
      }
      spec.commandLine()
          .getOut()
          .printf("wrote %d spans to %s (open it at ui.perfetto.dev)%n", spans[0], file.path());
      return 0;
    }
  }
}
