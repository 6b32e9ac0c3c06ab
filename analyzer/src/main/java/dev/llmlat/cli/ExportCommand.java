package dev.llmlat.cli;

import dev.llmlat.analyze.Analyzer;
import dev.llmlat.analyze.PerfettoExport;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "export", mixinStandardHelpOptions = true, description = "Exports aligned timelines for other tools.",
    subcommands = ExportCommand.Perfetto.class)
final class ExportCommand {

  @Command(name = "perfetto", mixinStandardHelpOptions = true, description = {
      "A request's aligned multi-layer timeline (or every span of a time window) as Chrome-trace JSON that",
      "ui.perfetto.dev and chrome://tracing open: a process per layer, the TTFT attribution as its own track."})
  static final class Perfetto implements Callable<Integer> {
    static final class What {
      @Parameters(paramLabel = "TRACE_ID", description = "One request's trace id.")
      String traceId;

      @Option(names = "--since", paramLabel = "DURATION", description = "Every span of the last DURATION instead (e.g. 5m).")
      String since;
    }

    @Mixin StoreOptions store;

    @ArgGroup(exclusive = true, multiplicity = "1")
    What what;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE", description = "The JSON file to write.")
    Path output;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException {
      Path target = output.toAbsolutePath();
      Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
      int spans;
      try (ClickHouseStore s = store.open(); OutputStream out = Files.newOutputStream(tmp)) {
        Analyzer analyzer = new Analyzer(s);
        if (what.traceId != null) {
          Analyzer.Explained e = analyzer.explainWithSpans(what.traceId);
          PerfettoExport.write(e.spans(), e.attribution(), out);
          spans = e.spans().size();
        } else {
          long now = System.currentTimeMillis() * 1_000_000L;
          var window = analyzer.window(now - Durations.parse(what.since).toNanos(), now);
          PerfettoExport.write(window, null, out);
          spans = window.size();
        }
      } catch (RuntimeException | IOException e) {
        Files.deleteIfExists(tmp);
        throw e;
      }
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      spec.commandLine().getOut().printf("wrote %d spans to %s (open it at ui.perfetto.dev)%n", spans, target);
      return 0;
    }
  }
}
