package dev.llmlat.store.confine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The engine's own access control for a confined store: a configuration the engine boots with
 * ({@code --config-file}), whose user {@code default} (the only user chDB runs queries as) has
 * grants without sources, file writes or SYSTEM, and a profile whose constraints hold every setting
 * that names a file, a disk or the SQL dialect constant.
 *
 * <p>Measured on chDB 26.5.3: it honours grants on table functions and engines of sources ({@code
 * READ ON URL}, {@code TABLE ENGINE ON File}, ...), on SYSTEM and access management, settings
 * constraints (MergeTree ones too, as {@code merge_tree_*}) and {@code user_scripts_path} for
 * {@code executable()}. It does not confine paths to {@code user_files_path} (local mode reads any
 * absolute path), and source grants with filters ({@code READ ON FILE('dir/.*')}) never match. READ
 * ON FILE is granted because the server's own staged inserts read their data with {@code file()};
 * clients' file reads are refused by {@link StatementCheck} before the engine sees them.
 */
public final class EngineAccessConfig {
  /** Settings that name files, disks or change how statements are parsed: constant for clients. */
  static final List<String> CONSTANT_SETTINGS =
      List.of(
          "format_schema",
          "format_schema_source",
          "format_template_resultset",
          "format_template_row",
          "input_format_record_errors_file_path",
          "output_format_schema",
          "rename_files_after_processing",
          "dialect",
          "polyglot_dialect",
          "merge_tree_disk",
          "merge_tree_table_disk",
          "merge_tree_storage_policy");

  static final String PRIVILEGES =
      "SELECT, INSERT, ALTER, CREATE, DROP, TRUNCATE, OPTIMIZE, SHOW, KILL QUERY, UNDROP TABLE, "
          + "dictGet, SYSTEM FLUSH LOGS, SYSTEM FLUSH ASYNC INSERT QUEUE";

  private EngineAccessConfig() {}

  /**
   * Writes the configuration for a store in {@code dataDir} under {@code dataDir/llmlat-serve}
   * (written anew at each start, each file whole or not at all) and returns the engine arguments
   * that boot with it.
   */
  public static List<String> write(Path dataDir, Confinement confinement) throws IOException {
    Path dir = Files.createDirectories(dataDir.resolve("llmlat-serve"));
    Path userFiles = Files.createDirectories(dataDir.resolve("user_files"));
    Path scripts =
        Files.createDirectories(
            dir.resolve("user_scripts")); // empty: executable() finds nothing to run
    Path users = dir.resolve("users.xml");
    Path config = dir.resolve("config.xml");
    writeAtomically(users, users(confinement));
    writeAtomically(
        config,
        "<clickhouse>\n"
            + "  <path>"
            + xml(slash(dataDir))
            + "</path>\n"
            + "  <user_files_path>"
            + xml(slash(userFiles))
            + "</user_files_path>\n"
            + "  <user_scripts_path>"
            + xml(slash(scripts))
            + "</user_scripts_path>\n"
            + "  <dictionaries_lib_path>"
            + xml(slash(scripts))
            + "</dictionaries_lib_path>\n"
            + "  <format_schema_path>"
            + xml(slash(userFiles))
            + "</format_schema_path>\n"
            + "  <users_config>"
            + xml(users.toString())
            + "</users_config>\n"
            + "</clickhouse>\n");
    return List.of("--config-file=" + config);
  }

  static String users(Confinement confinement) {
    StringBuilder grants = new StringBuilder();
    grants.append("        <query>GRANT ").append(PRIVILEGES).append(" ON *.*</query>\n");
    grants.append("        <query>GRANT READ ON FILE</query>\n");
    for (ExternalSource s : confinement.allowedSources()) {
      grants.append("        <query>GRANT READ, WRITE ON ").append(s.grant).append("</query>\n");
    }
    for (String engine : confinement.allowedSourceEngines()) {
      grants.append("        <query>GRANT TABLE ENGINE ON ").append(engine).append("</query>\n");
    }
    StringBuilder constraints = new StringBuilder();
    for (String setting : CONSTANT_SETTINGS) {
      constraints
          .append("        <")
          .append(setting)
          .append("><const/></")
          .append(setting)
          .append(">\n");
    }
    return "<clickhouse>\n"
        + "  <profiles>\n    <default>\n      <constraints>\n"
        + constraints
        + "      </constraints>\n    </default>\n  </profiles>\n"
        + "  <users>\n    <default>\n      <password></password>\n      <networks><ip>::1</ip><ip>127.0.0.1</ip></networks>\n"
        + "      <profile>default</profile>\n      <quota>default</quota>\n      <grants>\n"
        + grants
        + "      </grants>\n"
        + "    </default>\n  </users>\n"
        + "  <quotas>\n    <default></default>\n  </quotas>\n"
        + "</clickhouse>\n";
  }

  private static String slash(Path dir) {
    String s = dir.toAbsolutePath().normalize().toString();
    return s.endsWith("/") ? s : s + "/";
  }

  private static String xml(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  private static void writeAtomically(Path file, String text) throws IOException {
    Path tmp = Files.createTempFile(file.getParent(), file.getFileName().toString(), ".tmp");
    try {
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
