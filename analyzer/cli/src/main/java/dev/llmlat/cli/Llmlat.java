package dev.llmlat.cli;

import dev.llmlat.store.StoreException;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** The {@code llmlat} command line. */
@Command(
    name = "llmlat",
    mixinStandardHelpOptions = true,
    versionProvider = Llmlat.Version.class,
    description = {
      "Where did each LLM request's time-to-first-token go?",
      "One trace id across gateway, scheduler and GPU; spans in ClickHouse; every nanosecond attributed."
    })
public final class Llmlat {
  /**
   * The commands, in the order {@code --help} lists them. Only the one being run gets a picocli
   * model: built by reflection over every option, the models of all of them took about 0.3 s of a
   * one-shot command's start.
   */
  static final List<Class<?>> COMMANDS =
      List.of(
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
          RetainCommand.class,
          ImportCommand.class,
          GpuSummaryCommand.class,
          EbpfCommand.class,
          ExportCommand.class,
          StoreCommand.class,
          HelpCommand.class);

  /** Exit code for bad input: wrong flags, unreadable or malformed files. */
  public static final int EXIT_USAGE = 2;

  /** Exit code for a failure while running: a store or service refused. */
  public static final int EXIT_FAILURE = 1;

  /** The option that shows stack traces and the clients' own log lines; every command takes it. */
  static final String VERBOSE = "--verbose";

  @Option(
      names = VERBOSE,
      scope = ScopeType.INHERIT,
      description =
          "On a failure, print the stack trace, and the ClickHouse and HTTP clients' warnings, besides the message.")
  boolean verbose;

  public static void main(String[] args) {
    if (java.util.Arrays.asList(args).contains(VERBOSE)) {
      DriverLogs.verbose(); // before any client makes its logger, which reads its level once
    }
    dev.llmlat.runtime.process.Interrupts.install(args.length == 0 ? "" : args[0], System.err);
    EngineWarmUp.startFor(args);
    dev.llmlat.runtime.process.ExitSequence.exit(
        run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** The local services of {@code home}, whose store and ingester run as this command line. */
  static dev.llmlat.services.LocalServices services(dev.llmlat.runtime.home.LlmlatHome home) {
    return new dev.llmlat.services.LocalServices(home, Llmlat.class.getName());
  }

  /**
   * What to check when Kafka refused the client's credentials or rights (anywhere in the causes),
   * else "".
   */
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
    CommandLine cli = commandLine(args);
    cli.setOut(out);
    cli.setErr(err);
    cli.setExecutionExceptionHandler(
        (e, commandLine, parseResult) -> {
          if (e instanceof ResultPrinter.OutputClosed) {
            return SqlCommand
                .EXIT_OUTPUT_CLOSED; // the reader of our output went away (| head): nothing to say
          }
          if (e instanceof InterruptedException) {
            throw e; // a signal is ending the process: its exit sequence has the last word
          }
          boolean verbose = verbose(cli.getParseResult());
          int exit = failure(e, commandLine, verbose);
          if (verbose) {
            e.printStackTrace(commandLine.getErr());
          }
          commandLine.getErr().flush();
          return exit;
        });
    return cli.execute(args);
  }

  /**
   * Says in a line what went wrong (the stack trace comes only with --verbose) and picks the exit
   * code.
   */
  private static int failure(Exception e, CommandLine commandLine, boolean verbose) {
    String command = commandLine.getCommandSpec().qualifiedName();
    PrintWriter err = commandLine.getErr();
    if (e instanceof StoreException) {
      err.println("llmlat: " + e.getMessage());
      return EXIT_FAILURE;
    }
    if (e instanceof org.apache.kafka.common.KafkaException) {
      // e.g. a SASL/TLS handshake refused: Kafka's messages name the mechanism, never the secret
      err.println(command + ": Kafka: " + e.getMessage() + kafkaHint(e));
      return EXIT_FAILURE;
    }
    if (e instanceof IllegalStateException || e instanceof java.io.IOException) {
      err.println(command + ": " + e.getMessage() + kafkaHint(e));
      return EXIT_FAILURE;
    }
    if (e instanceof IllegalArgumentException) {
      err.println(command + ": " + e.getMessage());
      return EXIT_USAGE;
    }
    // not foreseen: still one line, naming the exception; the trace for a bug report comes with
    // --verbose
    err.println(
        command
            + ": "
            + e
            + (verbose ? "" : " (run again with " + VERBOSE + " for the stack trace)"));
    return EXIT_FAILURE;
  }

  /** Whether --verbose is among the parsed options, at the top or of any subcommand. */
  private static boolean verbose(CommandLine.ParseResult parsed) {
    for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.hasMatchedOption(VERBOSE)) {
        return true;
      }
    }
    return false;
  }

  /** The command line for {@code args}: with the one command they name, else with all of them. */
  static CommandLine commandLine(String[] args) {
    CommandLine cli = new CommandLine(new Llmlat());
    addSubcommands(cli, args.length == 0 ? "" : args[0]);
    return cli;
  }

  /**
   * Adds the command named {@code first} when it is one, else all of them (for {@code help}, and
   * for picocli's suggestions after a typo). Commands plugged in through {@link PluggedCommand} are
   * created only when named or listed.
   */
  private static void addSubcommands(CommandLine cli, String first) {
    List<java.util.ServiceLoader.Provider<PluggedCommand>> plugged =
        java.util.ServiceLoader.load(PluggedCommand.class).stream().toList();
    for (Class<?> type : COMMANDS) {
      if (type != HelpCommand.class && names(type).contains(first)) {
        cli.addSubcommand(type);
        return;
      }
    }
    for (java.util.ServiceLoader.Provider<PluggedCommand> command : plugged) {
      if (names(command.type()).contains(first)) {
        cli.addSubcommand(command.get());
        return;
      }
    }
    if (first.equals("-V") || first.equals("--version")) {
      return;
    }
    for (Class<?> type : COMMANDS) {
      cli.addSubcommand(type);
    }
    plugged.forEach(command -> cli.addSubcommand(command.get()));
  }

  private static List<String> names(Class<?> type) {
    Command command = type.getAnnotation(Command.class);
    if (command == null) {
      return List.of();
    }
    List<String> names = new java.util.ArrayList<>(List.of(command.aliases()));
    names.add(command.name());
    return names;
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Llmlat.class.getPackage().getImplementationVersion();
      return new String[] {"llmlat " + (v == null ? "dev" : v)};
    }
  }
}
