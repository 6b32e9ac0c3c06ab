package dev.llmlat.cli;

import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.services.LocalServices;
import dev.llmlat.store.QueryResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "services",
    mixinStandardHelpOptions = true,
    description =
        "The local services of $LLMLAT_HOME: a Kafka broker, the store process, the ingester, the live attributor.",
    subcommands = {
      ServicesCommand.Up.class,
      ServicesCommand.Down.class,
      ServicesCommand.Status.class
    })
final class ServicesCommand {

  /** The table, then where the store's password is (clients other than llmlat's need it). */
  static void printStatus(
      LocalServices services, List<LocalServices.Status> statuses, PrintWriter out) {
    printStatus(statuses, out);
    out.println(
        "store user: default, password in "
            + services.storePasswordFile()
            + (java.nio.file.Files.exists(services.storePasswordFile())
                ? " (mode 0600)"
                : " (made when the store first starts)"));
    out.flush();
  }

  static void printStatus(List<LocalServices.Status> statuses, PrintWriter out) {
    List<List<String>> rows = new ArrayList<>();
    for (LocalServices.Status s : statuses) {
      rows.add(
          List.of(
              s.service(),
              s.state(),
              s.pid() == 0 ? "" : Long.toString(s.pid()),
              s.address(),
              s.log().toString()));
    }
    ResultPrinter.print(
        new QueryResult(
            List.of(
                new QueryResult.Column("service", "String"),
                new QueryResult.Column("state", "String"),
                new QueryResult.Column("pid", "UInt32"),
                new QueryResult.Column("address", "String"),
                new QueryResult.Column("log", "String")),
            rows),
        ResultPrinter.Format.table,
        out);
  }

  @Command(
      name = "up",
      mixinStandardHelpOptions = true,
      description =
          "Starts the broker (unless --kafka names a cluster), the store, the ingester and the live attributor; reuses running ones.")
  static final class Up implements Callable<Integer> {
    @Mixin KafkaOptions kafka;

    @Option(
        names = "--kafka-port",
        defaultValue = "9092",
        description = "Broker port. Default: ${DEFAULT-VALUE}.")
    int kafkaPort;

    @Option(
        names = "--kafka-controller-port",
        defaultValue = "9093",
        description = "KRaft controller port. Default: ${DEFAULT-VALUE}.")
    int controllerPort;

    @Option(
        names = "--store-port",
        defaultValue = "8123",
        description = "The store's HTTP port. Default: ${DEFAULT-VALUE}.")
    int storePort;

    @Option(
        names = "--partitions",
        defaultValue = "4",
        description = "Partitions of otlp_spans when created. Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Option(
        names = "--no-live",
        description = "Do not start the live attributor (`llmlat attribute --live`).")
    boolean noLive;

    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
      PrintWriter out = spec.commandLine().getOut();
      LocalServices services = Llmlat.services(LlmlatHome.fromEnvironment());
      List<LocalServices.Status> status =
          services.up(
              new LocalServices.Options(
                  kafkaPort,
                  controllerPort,
                  storePort,
                  partitions,
                  kafka.bootstrap == null || kafka.bootstrap.isBlank() ? null : kafka.bootstrap,
                  kafka.clientProperties(),
                  !noLive));
      printStatus(services, status, out);
      return 0;
    }
  }

  @Command(
      name = "down",
      mixinStandardHelpOptions = true,
      description =
          "Stops the ingester (after it writes what it holds), the live attributor, the store and the broker.")
  static final class Down implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Override
    public Integer call() throws IOException {
      List<String> stopped = Llmlat.services(LlmlatHome.fromEnvironment()).down();
      spec.commandLine()
          .getOut()
          .println(
              stopped.isEmpty() ? "nothing was running" : "stopped " + String.join(", ", stopped));
      return 0;
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true, description = "Says what runs where.")
  static final class Status implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Override
    public Integer call() {
      LocalServices services = Llmlat.services(LlmlatHome.fromEnvironment());
      printStatus(services, services.status(), spec.commandLine().getOut());
      return 0;
    }
  }
}
