package dev.llmlat.imports;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * A file being imported and what names it: {@code id} is the SHA-256 of its bytes (first 32 hex
 * digits), so the same export under another name or path is the same import; {@code options} (the
 * settings that shaped its spans) are recorded with it but are not part of the id, so a re-import
 * with other options is recognised as the same data rather than stored as a second copy.
 */
public record ImportedFile(String id, String file, String format, String options) {
  private static final Pattern ID = Pattern.compile("[0-9a-f]{32}");

  public ImportedFile {
    if (!ID.matcher(id).matches()) {
      throw new IllegalArgumentException("not an import id (32 lowercase hex digits): " + id);
    }
  }

  /** Hashes {@code file}'s bytes. */
  public static ImportedFile of(Path file, String format, String options) throws IOException {
    MessageDigest sha256;
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
    byte[] buffer = new byte[1 << 20];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n; (n = in.read(buffer)) > 0; ) {
        sha256.update(buffer, 0, n);
      }
    }
    String id = HexFormat.of().formatHex(sha256.digest(), 0, 16);
    return new ImportedFile(id, file.toAbsolutePath().normalize().toString(), format, options);
  }
}
