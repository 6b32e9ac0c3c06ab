package dev.llmlat.store.confine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Decides whether a client's statement may run in a confined store, from the statement as the
 * engine itself parses it: its {@code EXPLAIN AST} tree, and where that tree leaves something out
 * (the kind of a SYSTEM statement, INTO OUTFILE and FROM INFILE, a dictionary's source keys and
 * layout, a second statement), the engine's own tokens ({@code tokenizeQuery}). Never a pattern
 * over the text.
 *
 * <p>Names in the tree are checked wherever they appear: the tree's text does not escape
 * identifiers, so a line break in one could make up lines, but never hide a real node's line, and a
 * made-up line can only add a refusal.
 */
public final class StatementCheck {
  /**
   * Statement kinds (the tree's root) a client may run; ATTACH and SYSTEM are looked at further.
   */
  private static final Set<String> STATEMENT_KINDS =
      Set.of(
          "SelectWithUnionQuery",
          "SelectIntersectExceptQuery",
          "SelectQuery",
          "InsertQuery",
          "CreateQuery",
          "CreateSQLFunctionQuery",
          "DropFunctionQuery",
          "AlterQuery",
          "DropQuery",
          "TruncateQuery",
          "Rename",
          "UndropQuery",
          "DescribeQuery",
          "DescribeCacheQuery",
          "ShowTables",
          "ShowColumns",
          "ShowCreateTableQuery",
          "ShowCreateDatabaseQuery",
          "ShowCreateDictionaryQuery",
          "ShowCreateViewQuery",
          "ShowProcesslistQuery",
          "ShowFunctions",
          "ShowEngineQuery",
          "ShowGrantsQuery",
          "ShowPrivilegesQuery",
          "ShowSetting",
          "ExistsTableQuery",
          "ExistsDatabaseQuery",
          "ExistsDictionaryQuery",
          "ExistsViewQuery",
          "Explain",
          "Set",
          "UseQuery",
          "KillQueryQuery",
          "OptimizeQuery",
          "CheckQuery",
          "DeleteQuery",
          "UpdateQuery",
          "DetachQuery",
          "AttachQuery",
          "SYSTEM");

  /** SYSTEM statements that neither stop, reload nor reconfigure anything. */
  private static final Set<String> SYSTEM_ALLOWED =
      Set.of("FLUSH LOGS", "FLUSH ASYNC INSERT QUEUE");

  /**
   * Keys of a CLICKHOUSE dictionary source that keep it on this store (host, port, query, where...
   * do not).
   */
  private static final Set<String> LOCAL_CLICKHOUSE_KEYS =
      Set.of("table", "db", "database", "update_field", "update_lag");

  /**
   * One token of the engine's lexer: its text and type (BareWord, StringLiteral, Whitespace, ...).
   */
  public record Token(String text, String type) {
    boolean word(String w) {
      return type.equals("BareWord") && text.equalsIgnoreCase(w);
    }

    boolean ignorable() {
      return type.equals("Whitespace") || type.equals("Comment");
    }
  }

  private final Confinement confinement;
  private final Set<String>
      reachingOut; // lower-case names of table functions and engines not allowed

  /**
   * @param tableFunctions the engine's table functions ({@code system.table_functions})
   * @param engines its table and database engines
   */
  public StatementCheck(Confinement confinement, Set<String> tableFunctions, Set<String> engines) {
    this.confinement = confinement;
    Set<String> out = new HashSet<>();
    tableFunctions.stream()
        .filter(f -> !confinement.allowsTableFunction(f))
        .forEach(f -> out.add(lower(f)));
    engines.stream().filter(e -> !confinement.allowsEngine(e)).forEach(e -> out.add(lower(e)));
    // a name allowed in one spelling stays allowed (format the table function, Log the engine)
    tableFunctions.stream()
        .filter(confinement::allowsTableFunction)
        .forEach(f -> out.remove(lower(f)));
    engines.stream().filter(confinement::allowsEngine).forEach(e -> out.remove(lower(e)));
    this.reachingOut = Set.copyOf(out);
  }

  public Confinement confinement() {
    return confinement;
  }

  /**
   * What must be refused before the engine parses the statement at all, from its tokens: more than
   * one statement (chDB runs every statement of a query, so {@code EXPLAIN AST a; b} would run
   * {@code b}), and a {@code disk(...)} definition in a SETTINGS clause, which the engine acts on
   * while it builds the tree (measured: a local disk's directory is made before the statement
   * fails) and which the tree shows only as an opaque {@code Set}.
   */
  public Optional<String> refusalBeforeParsing(List<Token> tokens) {
    List<Token> words = tokens.stream().filter(t -> !t.ignorable()).toList();
    for (int i = 0; i < words.size(); i++) {
      Token t = words.get(i);
      if (t.type().equals("Semicolon")
          && words.subList(i, words.size()).stream().anyMatch(w -> !w.type().equals("Semicolon"))) {
        return Optional.of("one statement per request (the engine reads more than one here)");
      }
      if (t.word("disk") && i + 1 < words.size() && words.get(i + 1).text().equals("(")) {
        return Optional.of(
            "disk(...) defines a disk on the host's files or another host; tables keep the store's disk");
      }
    }
    return Optional.empty();
  }

  /**
   * Why {@code statement}, whose {@code EXPLAIN AST} is {@code tree}, may not run; empty when it
   * may.
   */
  public Optional<String> refusal(String statement, String tree, List<Token> tokens) {
    List<String> lines = tree.lines().toList();
    if (lines.isEmpty()) {
      return Optional.of("the statement could not be checked (the engine gave no syntax tree)");
    }
    String kind = firstWord(lines.get(0));
    if (!STATEMENT_KINDS.contains(kind)) {
      return Optional.of("statements of the kind " + kind + " are not allowed through store serve");
    }
    if (kind.equals("SYSTEM")) {
      String what = systemKind(tokens);
      if (!SYSTEM_ALLOWED.contains(what)) {
        return Optional.of(
            "SYSTEM "
                + what
                + " stops, reloads or reconfigures the engine; store serve allows only SYSTEM "
                + String.join(", SYSTEM ", SYSTEM_ALLOWED.stream().sorted().toList()));
      }
    }
    if (kind.equals("AttachQuery")
        && lines.stream().skip(1).anyMatch(l -> !firstWord(l).equals("Identifier"))) {
      return Optional.of(
          "ATTACH with a definition or a path is not allowed through store serve (ATTACH TABLE name is)");
    }
    boolean dictionary = false;
    for (String line : lines) {
      String label = line.strip();
      if (label.startsWith("Function ")) {
        String name = secondWord(label);
        if (Confinement.HOST_FUNCTIONS.contains(lower(name))) {
          return Optional.of("the function " + name + " reaches the host's files or other hosts");
        }
        if (reachingOut.contains(lower(name))) {
          return Optional.of(
              name
                  + " reaches outside the store (files, programs or other hosts)"
                  + allowHint(name));
        }
      } else if (label.startsWith("FunctionWithKeyValueArguments")) {
        String source = lower(secondWord(label));
        if (!confinement.allowsDictionarySource(source)) {
          return Optional.of(
              "the dictionary source "
                  + source.toUpperCase(Locale.ROOT)
                  + " reaches outside the store");
        }
      } else if (label.startsWith("Dictionary definition")) {
        dictionary = true;
      }
    }
    String lower = lower(statement);
    if (dictionary || lower.contains("outfile") || lower.contains("infile")) {
      List<Token> words = tokens.stream().filter(t -> !t.ignorable()).toList();
      for (int i = 0; i + 1 < words.size(); i++) {
        if (words.get(i).word("INTO") && words.get(i + 1).word("OUTFILE")) {
          return Optional.of(
              "INTO OUTFILE writes a file of the host (clickhouse-client writes it on the client's side)");
        }
        if (words.get(i).word("FROM") && words.get(i + 1).word("INFILE")) {
          return Optional.of(
              "FROM INFILE reads a file of the host (send the data in the request body)");
        }
      }
      if (dictionary) {
        Optional<String> refused = dictionaryRefusal(words);
        if (refused.isPresent()) {
          return refused;
        }
      }
    }
    return Optional.empty();
  }

  private Optional<String> dictionaryRefusal(List<Token> words) {
    for (int i = 0; i + 2 < words.size(); i++) {
      if (words.get(i).word("LAYOUT")
          && words.get(i + 1).text().equals("(")
          && lower(words.get(i + 2).text()).contains("ssd")) {
        return Optional.of(
            "the dictionary layout " + words.get(i + 2).text() + " writes files of the host");
      }
      if (words.get(i).word("SOURCE")
          && words.get(i + 1).text().equals("(")
          && words.get(i + 2).word("CLICKHOUSE")
          && !confinement.allowsRemoteClickHouse()) {
        for (String key : keys(words, i + 3)) {
          if (!LOCAL_CLICKHOUSE_KEYS.contains(lower(key))) {
            return Optional.of(
                "the CLICKHOUSE dictionary source's "
                    + key.toUpperCase(Locale.ROOT)
                    + " may reach other hosts or run a query of its own; store serve allows "
                    + String.join(", ", LOCAL_CLICKHOUSE_KEYS.stream().sorted().toList())
                    + " (--allow-sources remote allows all)");
          }
        }
      }
    }
    return Optional.empty();
  }

  /** The keys of {@code NAME(key value key value ...)} whose opening bracket is at {@code open}. */
  private static List<String> keys(List<Token> words, int open) {
    List<String> keys = new ArrayList<>();
    if (open >= words.size() || !words.get(open).text().equals("(")) {
      return keys;
    }
    int depth = 0;
    boolean expectKey = true;
    for (int i = open; i < words.size(); i++) {
      String t = words.get(i).text();
      if (t.equals("(")) {
        depth++;
        continue;
      }
      if (t.equals(")")) {
        if (--depth == 0) {
          break;
        }
        continue;
      }
      if (depth != 1 || t.equals(",")) {
        continue;
      }
      if (expectKey) {
        keys.add(t);
      }
      expectKey = !expectKey;
    }
    return keys;
  }

  private static String systemKind(List<Token> tokens) {
    List<String> words = new ArrayList<>();
    boolean seenSystem = false;
    for (Token t : tokens) {
      if (t.ignorable()) {
        continue;
      }
      if (!seenSystem) {
        seenSystem = t.word("SYSTEM");
        continue;
      }
      if (!t.type().equals("BareWord")) {
        break;
      }
      words.add(t.text().toUpperCase(Locale.ROOT));
      if (words.size() == 4) {
        break;
      }
    }
    String all = String.join(" ", words);
    for (String allowed : SYSTEM_ALLOWED) {
      if (all.equals(allowed) || all.startsWith(allowed + " ")) {
        return allowed;
      }
    }
    return all;
  }

  private String allowHint(String name) {
    for (ExternalSource s : ExternalSource.values()) {
      if (s.tableFunctions.contains(name)
          || s.tableEngines.contains(name)
          || s.databaseEngines.contains(name)) {
        return "; store serve --allow-sources " + s.flagName() + " allows it";
      }
    }
    return "";
  }

  private static String firstWord(String line) {
    String s = line.strip();
    int sp = s.indexOf(' ');
    return sp < 0 ? s : s.substring(0, sp);
  }

  private static String secondWord(String label) {
    String[] parts = label.strip().split("\\s+");
    return parts.length > 1 ? parts[1] : "";
  }

  private static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
