package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.StoreException;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory that `llmlat store serve` holds is refused to everyone else, naming the holder.
 */
class StoreDataDirLockTest {
  @TempDir Path dir;

  private static EmbeddedClickHouse open(Path dataDir) {
    return EmbeddedClickHouse.open(dataDir, EngineLibrary.locate());
  }

  @Test
  void refusesADataDirOwnedByAnotherProcessNamingItsPid() throws Exception {
    Process owner =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                "dev.llmlat.cli.Llmlat",
                "store",
                "serve",
                "--port",
                "0",
                "--data-dir",
                dir.toString())
            .redirectErrorStream(true)
            .start();
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8))) {
      String line = lines.readLine();
      assertThat(line).startsWith("serving embedded ClickHouse (chDB) at " + dir.toAbsolutePath());
      assertThatThrownBy(() -> open(dir))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("is in use by another process (pid " + owner.pid() + ")");
    } finally {
      owner.destroy(); // SIGTERM: the store closes and releases the directory
      assertThat(owner.waitFor(20, TimeUnit.SECONDS)).isTrue();
    }
    try (EmbeddedClickHouse store = open(dir)) {
      assertThat(store.query("SELECT count() FROM llmlat_migrations").single())
          .isEqualTo(String.valueOf(SchemaMigrator.bundled().migrations().size()));
    }
  }
}
