package dev.llmlat.cli;

import dev.llmlat.home.EngineLibrary;
import dev.llmlat.home.LlmlatHome;
import dev.llmlat.services.LocalServices;
import dev.llmlat.store.EmbeddedClickHouse;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.Set;

/**
 * Loads the embedded engine's library on a side thread while the command line is parsed, for the
 * commands that will open the embedded store: binding it takes about as long as picocli takes to
 * model the command, and a one-shot command is otherwise waiting on one then the other.
 */
final class EngineWarmUp {
  /** Commands that open the store before anything else of note. */
  private static final Set<String> STORE_COMMANDS = Set.of("sql", "explain", "report", "diff", "analyze", "export", "migrate");

  private EngineWarmUp() {}

  static void startFor(String[] args) {
    if (args.length == 0 || !STORE_COMMANDS.contains(args[0])) {
      return;
    }
    Thread thread = new Thread(() -> {
      try {
        if (embedded(args)) {
          EmbeddedClickHouse.preload(EngineLibrary.locate());
        }
      } catch (RuntimeException e) {
        // the command's own open reports what is wrong
      }
    }, "llmlat-engine-warm-up");
    thread.setDaemon(true);
    thread.start();
  }

  /** Whether the command will use the embedded engine in this process: no server named, no store process running. */
  private static boolean embedded(String[] args) {
    if (Arrays.stream(args).anyMatch(a -> a.startsWith("--clickhouse-url") || a.equals("-h") || a.equals("--help"))) {
      return false;
    }
    String url = System.getenv("LLMLAT_CLICKHOUSE_URL");
    if (url != null && !url.isBlank()) {
      return false;
    }
    return !Files.exists(new LocalServices(LlmlatHome.fromEnvironment(), Llmlat.class.getName()).pidFile(LocalServices.STORE));
  }
}
