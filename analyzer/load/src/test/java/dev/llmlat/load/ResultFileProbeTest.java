package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --save-result} is tried before the run: a path where no file can be created is refused
 * then, not after the run.
 */
class ResultFileProbeTest {
  @TempDir Path dir;

  @Test
  void aDirectoryThatTakesNoNewFilesIsRefusedEvenWhenItsPermissionBitsSayYes() {
    // /proc looks writable to root (and its bits say rwx to nobody else): only creating a file
    // there tells
    assumeTrue(Files.isDirectory(Path.of("/proc/self")), "a Linux /proc");
    assertThatThrownBy(() -> ResultFile.probe("--save-result", Path.of("/proc/result.json")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "--save-result /proc/result.json: cannot create a file in /proc (the file system takes no new files there)");
  }

  @Test
  void aMissingDirectoryIsNamed() {
    Path missing = dir.resolve("missing/result.json");
    assertThatThrownBy(() -> ResultFile.probe("--save-result", missing))
        .hasMessage(
            "--save-result "
                + missing
                + ": cannot create a file in "
                + missing.getParent()
                + " (the directory does not exist)");
  }

  @Test
  void aWritableDirectoryPassesAndKeepsNothingOfTheProbe() throws Exception {
    Files.writeString(dir.resolve("result.json"), "old");
    ResultFile.probe("--save-result", dir.resolve("result.json"));
    try (var files = Files.list(dir)) {
      assertThat(files).containsExactly(dir.resolve("result.json"));
    }
    assertThat(Files.readString(dir.resolve("result.json"))).isEqualTo("old");
  }
}
