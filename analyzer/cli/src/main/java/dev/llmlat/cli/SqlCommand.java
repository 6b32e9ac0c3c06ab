package dev.llmlat.cli;

import dev.llmlat.runtime.process.Interrupts;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.RowStream;
import dev.llmlat.store.StoreException;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "sql",
    mixinStandardHelpOptions = true,
    description = {
      "Runs one SQL statement on the configured store and prints its result.",
      "Rows go out as the store sends them, in bounded memory however large the",
      "result; a reader that goes away (| head) ends it quietly, with status 141.",
      "Example: llmlat sql \"SELECT SpanName, count() FROM otel_traces GROUP BY SpanName\""
    })
final class SqlCommand implements Callable<Integer> {
  /**
   * The status of a command whose output's reader went away, as a shell reports a process ended by
   * SIGPIPE.
   */
  static final int EXIT_OUTPUT_CLOSED = 141;

  @Mixin StoreOptions store;

  @Parameters(arity = "1", paramLabel = "SQL", description = "The statement (quote it).")
  String sql;

  @Option(
      names = "--format",
      defaultValue = "table",
      description = {
        "table, tsv or json. Default: ${DEFAULT-VALUE}.",
        "table: aligned to the first "
            + ResultPrinter.TABLE_BLOCK
            + " rows (fewer if the store pauses first); a later,"
            + " longer value widens its column from that row on.",
        "tsv: a line of names, then a line a row (\\N for NULL; \\\\, \\t, \\n escaped).",
        "json: an array with an object a row (64-bit and wider integers as strings)."
      })
  ResultPrinter.Format format;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    try (ClickHouseStore s = store.open();
        RowStream rows = s.stream(sql, Map.of())) {
      ResultPrinter.print(rows, format, spec.commandLine().getOut());
    } catch (ResultPrinter.OutputClosed e) {
      return EXIT_OUTPUT_CLOSED; // closing the stream stopped the query
    } catch (StoreException e) {
      if (!Interrupts.signal().isEmpty()) {
        return Interrupts
            .exitStatus(); // the store closed under the query as the process stops on a signal
      }
      throw e;
    }
    return 0;
  }
}
