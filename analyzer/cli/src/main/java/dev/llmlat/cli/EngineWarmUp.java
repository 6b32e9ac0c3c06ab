package dev.llmlat.cli;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.services.LocalServices;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.Set;

/**
 * Starts the embedded engine while the command line is parsed, for the commands that will open the
 * embedded store: binding the library and starting the engine take about as long as picocli takes
 * to model the command, and a one-shot command would otherwise wait on one, then the other. A
 * command with one store opens it ahead ({@link EmbeddedClickHouse#openAhead}) when it is one
 * already (opening makes a store); {@code diff}, which may name two, only gets the library bound.
 */
final class EngineWarmUp {
  private static final Set<String> ONE_STORE =
      Set.of("sql", "explain", "report", "analyze", "export");
  private static final String DATA_DIR = "--data-dir";

  private EngineWarmUp() {}

  static void startFor(String[] args) {
    if (args.length == 0 || !(ONE_STORE.contains(args[0]) || args[0].equals("diff"))) {
      return;
    }
    try {
      if (!embedded(args)) {
        return;
      }
      if (ONE_STORE.contains(args[0])) {
        Path dir = dataDir(args);
        // only a store that exists: these commands read, and refuse (once parsed) a directory that
        // is none
        // rather than make a store in it; an empty name is refused too
        if (!dir.toString().isBlank() && StoreDirectory.isStore(dir)) {
          // the schema check's queries are the engine's first: slow once, then repeated cheaply by
          // the command
          EmbeddedClickHouse.openAhead(
              dir, EngineLibrary.locate(), store -> SchemaMigrator.bundled().migrate(store));
        }
        return;
      }
      Thread thread =
          new Thread(
              () -> EmbeddedClickHouse.preload(EngineLibrary.locate()), "llmlat-engine-warm-up");
      thread.setDaemon(true);
      thread.start();
    } catch (RuntimeException e) {
      // a bad path or home: the command, once parsed, says what is wrong
    }
  }

  /**
   * Whether the command will run the engine in this process: no server named, no store process
   * running, no help.
   */
  private static boolean embedded(String[] args) {
    if (Arrays.stream(args)
        .anyMatch(a -> a.startsWith("--clickhouse-url") || a.equals("-h") || a.equals("--help"))) {
      return false;
    }
    String url = System.getenv("LLMLAT_CLICKHOUSE_URL");
    if (url != null && !url.isBlank()) {
      return false;
    }
    return !Files.exists(
        Llmlat.services(LlmlatHome.fromEnvironment()).pidFile(LocalServices.STORE));
  }

  /**
   * The data directory as {@link StoreOptions} resolves it: the flag, the environment, the home's
   * default.
   */
  private static Path dataDir(String[] args) {
    for (int i = 1; i < args.length; i++) {
      if (args[i].equals(DATA_DIR) && i + 1 < args.length) {
        return Path.of(args[i + 1]);
      }
      if (args[i].startsWith(DATA_DIR + "=")) {
        return Path.of(args[i].substring(DATA_DIR.length() + 1));
      }
    }
    return Optional.ofNullable(System.getenv("LLMLAT_DATA_DIR"))
        .filter(s -> !s.isBlank())
        .map(Path::of)
        .orElseGet(() -> LlmlatHome.fromEnvironment().clickhouseData());
  }
}
