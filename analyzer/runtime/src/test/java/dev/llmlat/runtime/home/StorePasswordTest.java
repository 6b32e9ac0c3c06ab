package dev.llmlat.runtime.home;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StorePasswordTest {
  @TempDir Path dir;

  @Test
  void madeOnceAtRandomReadableByItsOwnerOnly() throws Exception {
    Path file = new LlmlatHome(dir).storePassword();
    assertThat(StorePassword.read(file)).isEmpty();
    String password = StorePassword.readOrCreate(file);
    assertThat(password).hasSizeGreaterThanOrEqualTo(32).matches("[A-Za-z0-9_-]+");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
    assertThat(StorePassword.readOrCreate(file)).isEqualTo(password); // kept across starts
    assertThat(StorePassword.readOrCreate(dir.resolve("other"))).isNotEqualTo(password);
    try (var leftovers = Files.list(dir)) {
      assertThat(leftovers.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("store.password", "other");
    }
  }

  @Test
  void aFileOthersCouldReadIsMadeOwnerOnly() throws Exception {
    Path file = Files.writeString(dir.resolve("pw"), "given\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    assertThat(StorePassword.read(file)).hasValue("given");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
  }
}
