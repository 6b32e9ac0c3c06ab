package dev.llmlat.store.internal;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An INSERT whose data the engine reads itself: {@code INSERT INTO t ... [SETTINGS ...] FORMAT x}
 * (or {@code VALUES}) becomes {@code INSERT INTO t ... SELECT * FROM file(data, x) [SETTINGS ...]},
 * the structure taken from the table. chDB 26.5 reads the data of an INSERT it parses on its client
 * side (inline data, FROM INFILE) together with whatever waits on the process's stdin (measured: a
 * piped line became a row, VALUES inserts failed with code 48); the file function runs inside the
 * engine and never looks at stdin.
 */
public final class InsertFromFile {
  private static final Pattern INSERT_TAIL =
      Pattern.compile("(?is)^(.*?)(?:\\s+SETTINGS\\s+(.*?))?\\s+(?:FORMAT\\s+\\w+|VALUES)\\s*$");

  private InsertFromFile() {}

  /**
   * {@code insert} (its data cut off) reading the data in {@code file}, written in {@code format}.
   */
  public static String statement(String insert, Path file, String format) {
    Matcher m = INSERT_TAIL.matcher(insert.strip());
    if (!m.matches()) {
      throw new IllegalArgumentException("not an INSERT ... FORMAT or INSERT ... VALUES statement");
    }
    return m.group(1)
        + " SELECT * FROM file("
        + literal(file.toString())
        + ", "
        + literal(format)
        + ")"
        + (m.group(2) == null ? "" : " SETTINGS " + m.group(2));
  }

  private static String literal(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
