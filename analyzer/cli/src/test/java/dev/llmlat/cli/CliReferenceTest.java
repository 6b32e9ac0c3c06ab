package dev.llmlat.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * docs/cli.md is what the commands' help says now. After changing a command, write it anew with
 * {@code mvn -pl analyzer/cli test -Dtest=CliReferenceTest -Dllmlat.writeDocs=true}.
 */
class CliReferenceTest {
  private static final Path DOC = Path.of("../../docs/cli.md");

  @Test
  void docsCliMdIsTheHelpOfEveryCommand() throws IOException {
    String now = CliReference.markdown();
    if (Boolean.getBoolean("llmlat.writeDocs")) {
      Files.writeString(DOC, now, StandardCharsets.UTF_8);
    }
    assertThat(Files.isRegularFile(DOC)).as(DOC.toAbsolutePath() + " exists").isTrue();
    assertThat(Files.readString(DOC, StandardCharsets.UTF_8))
        .as(
            "docs/cli.md is out of date: run mvn -pl analyzer/cli test -Dtest=CliReferenceTest -Dllmlat.writeDocs=true")
        .isEqualTo(now);
    // every command is in it, subcommands too
    assertThat(now)
        .contains("## `llmlat store serve`")
        .contains("--allow-sources")
        .contains("## `llmlat import nsys`")
        .contains("## `llmlat load`")
        .contains("--max-line");
  }
}
