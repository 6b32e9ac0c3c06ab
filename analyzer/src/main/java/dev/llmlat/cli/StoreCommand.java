package dev.llmlat.cli;

import dev.llmlat.store.ClickHouseStores;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.StoreConfig;
import dev.llmlat.store.http.ClickHouseHttpServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "store",
    mixinStandardHelpOptions = true,
    description = "The embedded store as a process of its own.",
    subcommands = StoreCommand.Serve.class)
final class StoreCommand {

  @Command(
      name = "serve",
      mixinStandardHelpOptions = true,
      description = {
        "Owns the embedded store's data directory and serves ClickHouse's HTTP interface on 127.0.0.1,",
        "so the official driver, curl and Grafana's ClickHouse plugin reach it like a server. Stops on SIGTERM."
      })
  static final class Serve implements Callable<Integer> {
    @Mixin StoreOptions store;

    @Option(names = "--port", defaultValue = "8123", description = "TCP port on 127.0.0.1 (0: any free one). Default: ${DEFAULT-VALUE}.")
    int port;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      StoreConfig config = store.config();
      if (config.kind() != StoreConfig.Kind.EMBEDDED) {
        throw new IllegalArgumentException("store serve serves the embedded store; --clickhouse-url points at a server already");
      }
      EmbeddedClickHouse embedded = (EmbeddedClickHouse) ClickHouseStores.open(config);
      CountDownLatch stopped = new CountDownLatch(1);
      try {
        store.migrator().migrate(embedded);
        ClickHouseHttpServer http = ClickHouseHttpServer.start(embedded, port);
        dev.llmlat.process.ExitSequence.register("stopping the store's HTTP server", () -> {
          http.close();
          embedded.close();
          stopped.countDown();
        }, 10_000);
        PrintWriter out = spec.commandLine().getOut();
        out.println("serving " + embedded.description() + " at " + http.url());
        out.flush();
        stopped.await();
        return 0;
      } catch (RuntimeException | IOException e) {
        embedded.close();
        throw e;
      }
    }
  }
}
