package dev.llmlat.store.schema;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** One numbered schema migration: its file name, text and the statements it runs. */
public record Migration(int version, String name, String text) {

  /** Parses {@code NNNN_name.sql}. */
  public static Migration of(String fileName, String text) {
    int underscore = fileName.indexOf('_');
    if (underscore <= 0 || !fileName.endsWith(".sql")) {
      throw new IllegalArgumentException(
          "migration file must be named NNNN_name.sql, got " + fileName);
    }
    int version = Integer.parseInt(fileName.substring(0, underscore));
    return new Migration(version, fileName.substring(underscore + 1, fileName.length() - 4), text);
  }

  /** The statements, split at lines that end with {@code ;}; comment-only chunks are dropped. */
  public List<String> statements() {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      current.append(line).append('\n');
      if (line.stripTrailing().endsWith(";")) {
        add(statements, current);
      }
    }
    add(statements, current);
    return statements;
  }

  private static void add(List<String> statements, StringBuilder chunk) {
    String sql = chunk.toString().strip();
    chunk.setLength(0);
    if (sql.endsWith(";")) {
      sql = sql.substring(0, sql.length() - 1).strip();
    }
    boolean onlyComments = sql.lines().allMatch(l -> l.isBlank() || l.strip().startsWith("--"));
    if (!onlyComments) {
      statements.add(sql);
    }
  }

  /** SHA-256 of the text, recorded when applied. */
  public String checksum() {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
