package dev.llmlat.store.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the store needs to know about a statement's text before the engine sees it, read with
 * ClickHouse's lexical rules (quoted strings and identifiers, {@code --}, {@code #} and nested
 * block comments, heredocs): its words outside strings and comments, whether more than one
 * statement follows, its FORMAT clause, and where an INSERT's inline data begins.
 *
 * <p>The engine (chDB) runs every statement of a multi-statement text; ClickHouse's HTTP interface
 * refuses them, and so does the store's, so the checks made on the words see the one statement that
 * runs.
 */
public record SqlText(List<String> words, int statements, String format, int dataOffset) {

  /** The upper-cased words outside strings, identifiers in quotes and comments. */
  public boolean hasWord(String... any) {
    for (String w : words) {
      for (String a : any) {
        if (w.equals(a)) {
          return true;
        }
      }
    }
    return false;
  }

  public String firstWord() {
    return words.isEmpty() ? "" : words.get(0);
  }

  /** An INSERT whose data follows {@code FORMAT name} in the same text. */
  public boolean hasInlineData() {
    return dataOffset >= 0;
  }

  public boolean isInsertWithFormat() {
    return firstWord().equals("INSERT") && format != null;
  }

  /**
   * Lexes {@code text}. For an INSERT, lexing stops after {@code FORMAT name} or {@code VALUES}:
   * what follows is data ({@link #dataOffset()} marks where, after the blanks and one line break
   * that separate it from FORMAT name); {@link #format()} is then the data's format.
   */
  public static SqlText of(String text) {
    List<String> words = new ArrayList<>();
    int statements = 0;
    boolean inStatement = false;
    String format = null;
    int dataOffset = -1;
    int n = text.length();
    int i = 0;
    boolean afterFormat = false;
    int formatAt = -1;
    while (i < n) {
      char c = text.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '-' && i + 1 < n && text.charAt(i + 1) == '-' || c == '#') {
        while (i < n && text.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
        i = skipBlockComment(text, i);
      } else if (c == '\'' || c == '"' || c == '`') {
        i = skipQuoted(text, i, c);
        afterFormat = false;
        if (!inStatement) {
          statements++;
          inStatement = true;
        }
      } else if (c == '$' && heredocEnd(text, i) > 0) {
        i = heredocEnd(text, i);
        if (!inStatement) {
          statements++;
          inStatement = true;
        }
      } else if (c == ';') {
        inStatement = false;
        afterFormat = false;
        i++;
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(text.charAt(i)) || text.charAt(i) == '_')) {
          i++;
        }
        String word = text.substring(start, i).toUpperCase(Locale.ROOT);
        if (!inStatement) {
          statements++;
          inStatement = true;
        }
        words.add(word);
        if (word.equals("VALUES")
            && words.get(0).equals("INSERT")
            && !words.contains("SELECT")
            && !words.contains("WITH")) {
          // INSERT ... VALUES: the values are data in the Values format, as after FORMAT Values
          format = "Values";
          dataOffset = i;
          break;
        }
        if (afterFormat) {
          afterFormat = false;
          format = text.substring(start, i);
          formatAt = words.size() - 1;
          if (words.get(0).equals("INSERT")
              && !words.subList(0, formatAt).contains("SELECT")
              && !words.subList(0, formatAt).contains("VALUES")) {
            dataOffset = dataStart(text, i);
            break;
          }
        } else if (word.equals("FORMAT")) {
          afterFormat = true;
        }
      } else {
        if (!inStatement) {
          statements++;
          inStatement = true;
        }
        afterFormat = false;
        i++;
      }
    }
    // a FORMAT clause ends the statement (SETTINGS may follow it): a word "format" elsewhere is a
    // name
    if (format != null
        && dataOffset < 0
        && formatAt + 1 < words.size()
        && !words.get(formatAt + 1).equals("SETTINGS")) {
      format = null;
    }
    if (dataOffset >= 0 && text.substring(dataOffset).isBlank()) {
      dataOffset = -1; // FORMAT (or VALUES) with nothing after it: the data comes separately
    }
    return new SqlText(List.copyOf(words), statements, format, dataOffset);
  }

  /** After {@code FORMAT name}: blanks, then one line break, then the data. */
  private static int dataStart(String text, int i) {
    int n = text.length();
    while (i < n && (text.charAt(i) == ' ' || text.charAt(i) == '\t')) {
      i++;
    }
    if (i < n && text.charAt(i) == '\r') {
      i++;
    }
    if (i < n && text.charAt(i) == '\n') {
      i++;
    }
    return i;
  }

  private static int skipBlockComment(String text, int i) {
    int depth = 0;
    int n = text.length();
    while (i < n) {
      if (text.startsWith("/*", i)) {
        depth++;
        i += 2;
      } else if (text.startsWith("*/", i)) {
        depth--;
        i += 2;
        if (depth == 0) {
          return i;
        }
      } else {
        i++;
      }
    }
    return n;
  }

  private static int skipQuoted(String text, int i, char quote) {
    int n = text.length();
    i++;
    while (i < n) {
      char c = text.charAt(i);
      if (c == '\\') {
        i += 2;
      } else if (c == quote) {
        if (i + 1 < n && text.charAt(i + 1) == quote) {
          i += 2; // a doubled quote stands for itself
        } else {
          return i + 1;
        }
      } else {
        i++;
      }
    }
    return n;
  }

  /**
   * The end of a heredoc {@code $tag$ ... $tag$} starting at {@code i}, or -1 when none starts
   * there.
   */
  private static int heredocEnd(String text, int i) {
    int j = i + 1;
    while (j < text.length()
        && (Character.isLetterOrDigit(text.charAt(j)) || text.charAt(j) == '_')) {
      j++;
    }
    if (j >= text.length() || text.charAt(j) != '$') {
      return -1;
    }
    String tag = text.substring(i, j + 1);
    int close = text.indexOf(tag, j + 1);
    return close < 0 ? -1 : close + tag.length();
  }
}
