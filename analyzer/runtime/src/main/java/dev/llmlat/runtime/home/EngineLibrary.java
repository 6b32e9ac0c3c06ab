package dev.llmlat.runtime.home;

import java.nio.file.Path;
import java.util.Map;

/** Finds the embedded engine library the way {@code scripts/fetch-chdb} places it. */
public final class EngineLibrary {
  public static final String CHDB_VERSION = "26.5.3";
  public static final String ENV = "LLMLAT_CHDB_LIB";

  private EngineLibrary() {}

  public static Path locate() {
    return locate(System.getenv());
  }

  static Path locate(Map<String, String> env) {
    String explicit = env.get(ENV);
    if (explicit != null && !explicit.isBlank()) {
      return Path.of(explicit);
    }
    String cache = env.get("LLMLAT_CACHE");
    Path root;
    if (cache != null && !cache.isBlank()) {
      root = Path.of(cache);
    } else {
      String xdg = env.get("XDG_CACHE_HOME");
      root =
          (xdg != null && !xdg.isBlank()
                  ? Path.of(xdg)
                  : Path.of(System.getProperty("user.home"), ".cache"))
              .resolve("llmlat");
    }
    return root.resolve("chdb").resolve(CHDB_VERSION).resolve("libchdb.so");
  }
}
