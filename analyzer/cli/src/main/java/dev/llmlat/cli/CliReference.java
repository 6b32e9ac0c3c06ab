package dev.llmlat.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/**
 * The reference of every command ({@code docs/cli.md}), made from picocli's own help so it cannot
 * drift from the code: each command and subcommand's usage, at a fixed width, with defaults that
 * come from the environment shown as their variables, not as this machine's values.
 */
final class CliReference {
  private static final int WIDTH = 100;

  private CliReference() {}

  /**
   * The markdown of the commands this class path holds (plugged-in ones, such as bench, included
   * when present).
   */
  static String markdown() {
    CommandLine root = Llmlat.commandLine(new String[0]);
    StringBuilder md =
        new StringBuilder(
            "# llmlat commands\n\n"
                + "Made from the commands' own `--help` (`CliReferenceTest` keeps it current). Exit codes: 0 fine,\n"
                + "1 a store or service refused, 2 bad input; every command also takes `--verbose`.\n");
    List<List<String>> paths = new ArrayList<>();
    collect(root, new ArrayList<>(), paths);
    for (List<String> path : paths) {
      CommandLine cli = root;
      for (String name : path) {
        cli = cli.getSubcommands().get(name);
      }
      cli.setUsageHelpWidth(WIDTH);
      String usage = cli.getUsageMessage(CommandLine.Help.Ansi.OFF);
      md.append("\n## `llmlat")
          .append(path.isEmpty() ? "" : " " + String.join(" ", path))
          .append("`\n\n```text\n")
          .append(usage.stripTrailing())
          .append("\n```\n");
    }
    return md.toString();
  }

  private static void collect(CommandLine cli, List<String> path, List<List<String>> into) {
    into.add(List.copyOf(path));
    cli.getSubcommands()
        .forEach(
            (name, sub) -> {
              if (!name.equals("help")
                  && sub.getCommandSpec().name().equals(name)) { // aliases once
                List<String> next = new ArrayList<>(path);
                next.add(name);
                collect(sub, next, into);
              }
            });
  }
}
