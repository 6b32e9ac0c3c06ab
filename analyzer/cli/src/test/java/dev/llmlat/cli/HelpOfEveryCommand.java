package dev.llmlat.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/**
 * Prints {@code --help} of every llmlat command and subcommand, then {@code services status}: run
 * in a child JVM by {@link CliSecurityTest} with secrets in its environment (picocli reads {@code
 * ${env:...}} defaults from the real environment, which a test cannot change in-process).
 */
public final class HelpOfEveryCommand {
  public static void main(String[] args) {
    PrintWriter out = new PrintWriter(System.out, true);
    List<List<String>> paths = new ArrayList<>();
    collect(Llmlat.commandLine(new String[0]), new ArrayList<>(), paths);
    int failed = 0;
    for (List<String> path : paths) {
      List<String> argv = new ArrayList<>(path);
      argv.add("--help");
      int exit = Llmlat.run(argv.toArray(String[]::new), out, out);
      out.println("== exit " + exit + " for " + String.join(" ", argv));
      failed += exit == 0 ? 0 : 1;
    }
    out.println("== commands " + paths.size());
    int status = Llmlat.run(new String[] {"services", "status"}, out, out);
    out.flush();
    System.exit(failed == 0 && status == 0 ? 0 : 1);
  }

  private static void collect(CommandLine cli, List<String> path, List<List<String>> into) {
    into.add(List.copyOf(path));
    cli.getSubcommands()
        .forEach(
            (name, sub) -> {
              if (!name.equals("help")
                  && sub.getCommandSpec().name().equals(name)) { // skip aliases
                List<String> next = new ArrayList<>(path);
                next.add(name);
                collect(sub, next, into);
              }
            });
  }
}
