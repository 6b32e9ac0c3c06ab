package dev.llmlat.runtime.home;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;

/**
 * The store's password: made once, at random, into a file only its owner can read (mode 0600), and
 * read from there by the store and by every llmlat client of it.
 */
public final class StorePassword {
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");

  private StorePassword() {}

  /** The password in {@code file}, made first if the file does not exist. */
  public static String readOrCreate(Path file) throws IOException {
    Optional<String> existing = read(file);
    if (existing.isPresent()) {
      return existing.get();
    }
    Files.createDirectories(file.toAbsolutePath().getParent());
    byte[] random = new byte[24];
    new SecureRandom().nextBytes(random);
    String password = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    // written under another name with 0600 from its creation, then moved into place: the
    // password is never readable by others, and two stores starting at once agree on one
    Path temp =
        Files.createTempFile(
            file.toAbsolutePath().getParent(),
            ".store-password-",
            ".tmp",
            PosixFilePermissions.asFileAttribute(OWNER_ONLY));
    try {
      Files.writeString(temp, password + "\n", StandardCharsets.UTF_8);
      try {
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
      } catch (FileAlreadyExistsException raced) {
        return read(file).orElseThrow(() -> new IOException(file + " is empty"));
      }
    } finally {
      Files.deleteIfExists(temp);
    }
    return read(file).orElseThrow(() -> new IOException(file + " is empty"));
  }

  /**
   * The password in {@code file}, if it exists. A file others may read is made owner-only first: a
   * password they could read protects nothing.
   */
  public static Optional<String> read(Path file) throws IOException {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    if (!Files.getPosixFilePermissions(file).equals(OWNER_ONLY) && Files.isWritable(file)) {
      Files.setPosixFilePermissions(file, OWNER_ONLY);
    }
    String first =
        Files.readString(file, StandardCharsets.UTF_8).lines().findFirst().orElse("").strip();
    if (first.isEmpty()) {
      throw new IOException(
          "the store's password file "
              + file
              + " is empty: delete it and a new password is made at the next start");
    }
    return Optional.of(first);
  }
}
