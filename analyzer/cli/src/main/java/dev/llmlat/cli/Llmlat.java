package dev.llmlat.cli;

import dev.llmlat.store.StoreException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;

/** The {@code llmlat} command line. */
@Command(
    name = "llmlat",
    mixinStandardHelpOptions = true,
    versionProvider = Llmlat.Version.class,
    description = {
      "Where did each LLM request's time-to-first-token go?",
      "One trace id across gateway, scheduler and GPU; spans in ClickHouse; every nanosecond attributed."
    },
    subcommands = {
      DemoCommand.class,
      LoadCommand.class,
      SqlCommand.class,
      MigrateCommand.class,
      ServicesCommand.class,
      IngestCommand.class,
      AnalyzeCommand.class,
      AttributeCommand.class,
      ExplainCommand.class,
      ReportCommand.class,
      DiffCommand.class,
      ImportCommand.class,
      GpuSummaryCommand.class,
      EbpfCommand.class,
      ExportCommand.class,
      StoreCommand.class,
      HelpCommand.class
    })
public final class Llmlat {
  /** Exit code for bad input: wrong flags, unreadable or malformed files. */
  public static final int EXIT_USAGE = 2;
  /** Exit code for a failure while running: a store or service refused. */
  public static final int EXIT_FAILURE = 1;

  public static void main(String[] args) {
    dev.llmlat.process.Interrupts.install(args.length == 0 ? "" : args[0], System.err);
    dev.llmlat.process.ExitSequence.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** The local services of {@code home}, whose store and ingester run as this command line. */
  static dev.llmlat.services.LocalServices services(dev.llmlat.home.LlmlatHome home) {
    return new dev.llmlat.services.LocalServices(home, Llmlat.class.getName());
  }

  /** What to check when Kafka refused the client's credentials or rights (anywhere in the causes), else "". */
  private static String kafkaHint(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof org.apache.kafka.common.errors.AuthenticationException
          || t instanceof org.apache.kafka.common.errors.AuthorizationException) {
        return " (check the --kafka-config settings)";
      }
    }
    return "";
  }

  /** Runs the command line with the given streams; returns the exit code. */
  public static int run(String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cli = new CommandLine(new Llmlat());
    for (PluggedCommand command : java.util.ServiceLoader.load(PluggedCommand.class)) {
      cli.addSubcommand(command);
    }
    cli.setOut(out);
    cli.setErr(err);
    cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
      if (e instanceof ResultPrinter.OutputClosed) {
        return SqlCommand.EXIT_OUTPUT_CLOSED; // the reader of our output went away (| head): nothing to say
      }
      if (e instanceof StoreException) {
        commandLine.getErr().println("llmlat: " + e.getMessage());
        return EXIT_FAILURE;
      }
      if (e instanceof org.apache.kafka.common.KafkaException) {
        // e.g. a SASL/TLS handshake refused: Kafka's messages name the mechanism, never the secret
        commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": Kafka: " + e.getMessage() + kafkaHint(e));
        return EXIT_FAILURE;
      }
      if (e instanceof IllegalStateException || e instanceof java.io.IOException) {
        commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + e.getMessage() + kafkaHint(e));
        return EXIT_FAILURE;
      }
      if (e instanceof IllegalArgumentException) {
        commandLine.getErr().println(commandLine.getCommandSpec().qualifiedName() + ": " + e.getMessage());
        return EXIT_USAGE;
      }
      throw e;
    });
    return cli.execute(args);
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Llmlat.class.getPackage().getImplementationVersion();
      return new String[] {"llmlat " + (v == null ? "dev" : v)};
    }
  }
}
