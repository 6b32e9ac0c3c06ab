package dev.llmlat.cli;

import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.schema.Migration;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

@Command(
    name = "migrate",
    mixinStandardHelpOptions = true,
    description = {
      "Applies the schema migrations (schemas/clickhouse) the store lacks and lists them.",
      "With --cluster NAME, the cluster variant (schemas/clickhouse/cluster): ON CLUSTER DDL, replicated *_local tables",
      "and Distributed tables with the usual names; every other command then needs the same --cluster."
    })
final class MigrateCommand implements Callable<Integer> {
  @Mixin StoreOptions store;
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    SchemaMigrator migrator = store.migrator();
    try (ClickHouseStore s = StoreOptions.connect(store.config(StoreOptions.Access.WRITE))) {
      SchemaMigrator.Outcome outcome = migrator.migrate(s);
      store.dropOrphanStagingTables(s);
      for (Migration m : outcome.applied()) {
        out.printf("applied %04d_%s%n", m.version(), m.name());
      }
      out.printf(
          "%s: schema up to date (%d applied now, %d before)%n",
          s.description(), outcome.applied().size(), outcome.alreadyApplied());
    }
    return 0;
  }
}
