package dev.llmlat.store;

import java.util.List;
import java.util.regex.Pattern;

/** Builds the INSERT statements both stores send, so they stay identical. */
final class InsertStatements {
  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_.]*");

  private InsertStatements() {}

  static String rowBinary(String table, List<String> columns, String deduplicationToken) {
    return into(table, columns) + settings(deduplicationToken) + " FORMAT RowBinary";
  }

  /**
   * {@code INSERT INTO table (cols) SELECT * FROM file(file, 'RowBinary', structure)}; {@code file}
   * and {@code structure} come quoted as SQL string literals.
   */
  static String rowBinaryFromFile(
      String table,
      List<String> columns,
      String quotedFile,
      String quotedStructure,
      String deduplicationToken) {
    return into(table, columns)
        + " SELECT * FROM file("
        + quotedFile
        + ", 'RowBinary', "
        + quotedStructure
        + ")"
        + settings(deduplicationToken);
  }

  private static String into(String table, List<String> columns) {
    StringBuilder sql = new StringBuilder("INSERT INTO ").append(identifier(table)).append(" (");
    for (int i = 0; i < columns.size(); i++) {
      sql.append(i == 0 ? "" : ", ").append('`').append(identifier(columns.get(i))).append('`');
    }
    return sql.append(')').toString();
  }

  private static String settings(String deduplicationToken) {
    // No insert of ours repeats a sorting key within itself (one attribution row per request), so
    // collapsing the block on insert (ReplacingMergeTree) is wasted work: measured 38% of the
    // attribution insert. Readers use FINAL, which collapses versions across inserts anyway.
    String settings = " SETTINGS optimize_on_insert = 0";
    // Through a Distributed table (the cluster schema) the insert must reach the shards before it
    // is acknowledged, carrying the token with it; on a plain table the setting does nothing.
    return deduplicationToken == null
        ? settings
        : settings
            + ", insert_deduplication_token = '"
            + token(deduplicationToken)
            + "', insert_distributed_sync = 1";
  }

  static String identifier(String name) {
    if (!IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException("not a plain identifier: '" + name + "'");
    }
    return name;
  }

  static String token(String token) {
    if (!token.matches("[A-Za-z0-9_.:\\-]+")) {
      throw new IllegalArgumentException(
          "deduplication token must be [A-Za-z0-9_.:-]+, got '" + token + "'");
    }
    return token;
  }
}
