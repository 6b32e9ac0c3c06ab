package dev.llmlat.cli;

import dev.llmlat.store.ClickHouseStore;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(
    name = "sql",
    mixinStandardHelpOptions = true,
    description = {
      "Runs one SQL statement on the configured store and prints its result.",
      "Example: llmlat sql \"SELECT SpanName, count() FROM otel_traces GROUP BY SpanName\""
    })
final class SqlCommand implements Callable<Integer> {
  @Mixin StoreOptions store;

  @Parameters(arity = "1", paramLabel = "SQL", description = "The statement (quote it).")
  String sql;

  @Option(names = "--format", defaultValue = "table", description = "table (aligned), tsv or json. Default: ${DEFAULT-VALUE}.")
  ResultPrinter.Format format;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    try (ClickHouseStore s = store.open()) {
      ResultPrinter.print(s.query(sql), format, spec.commandLine().getOut());
    }
    return 0;
  }
}
