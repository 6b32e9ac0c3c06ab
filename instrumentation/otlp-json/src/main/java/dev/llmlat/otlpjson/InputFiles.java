package dev.llmlat.otlpjson;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Opens an export file, plain or gzip, counting the file's bytes for progress, and says in words
 * what is wrong with a path that cannot be read. Every importer opens its files here, so {@code
 * llmlat import} words a bad file alike whatever its format.
 */
public final class InputFiles {
  private static final JsonFactory JSON =
      JsonFactory.builder()
          // A document can be one request of any size; attribute strings (Kineto kernel names,
          // prompts) can be large.
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxStringLength(64 * 1024 * 1024)
                  .maxDocumentLength(-1)
                  .build())
          .build();

  private InputFiles() {}

  /**
   * A streaming JSON parser over {@code in}, with the limits every importer reads by (strings up to
   * 64 MiB, documents of any length); closing it closes {@code in}.
   */
  public static JsonParser jsonParser(InputStream in) throws IOException {
    return JSON.createParser(in);
  }

  /**
   * The file, decompressed when it is gzip, reporting {@code base + bytes read} of {@code total}
   * about every MiB.
   */
  public static InputStream open(Path file, ReadProgress progress, long base, long total)
      throws IOException {
    checkReadable(file);
    if (Files.size(file) == 0) {
      throw new InvalidOtlpJsonException(file, "empty file");
    }
    boolean gzip = isGzip(file);
    InputStream raw =
        new Counting(
            new BufferedInputStream(Files.newInputStream(file), 1 << 16), progress, base, total);
    try {
      return gzip ? new GZIPInputStream(raw, 1 << 16) : raw;
    } catch (IOException e) {
      raw.close();
      throw e;
    }
  }

  public static boolean isGzip(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return in.read() == 0x1f && in.read() == 0x8b;
    }
  }

  /**
   * Refuses a path that is no readable regular file, saying which: missing, a directory, a FIFO or
   * other special file (an import reads its file twice, a pass to check and a pass to emit, which a
   * pipe cannot give), or not readable.
   */
  public static void checkReadable(Path file) throws InvalidOtlpJsonException {
    if (Files.isRegularFile(file)) {
      if (!Files.isReadable(file)) {
        throw new InvalidOtlpJsonException(file, "permission denied (the file is not readable)");
      }
      return;
    }
    if (Files.isDirectory(file)) {
      throw new InvalidOtlpJsonException(file, "is a directory, not an export file");
    }
    if (Files.exists(file)) {
      throw new InvalidOtlpJsonException(
          file,
          "is "
              + kind(file)
              + ", not a regular file: an import reads the file"
              + " twice (checks it, then imports it), so save the export to a file first");
    }
    Path dir = file.toAbsolutePath().getParent();
    throw new InvalidOtlpJsonException(
        file,
        dir != null && !Files.isDirectory(dir)
            ? "no such file (directory " + dir + " does not exist)"
            : "no such file");
  }

  /**
   * A read failure as the file's problem in words: truncated gzip, malformed JSON, or unreadable.
   */
  public static InvalidOtlpJsonException invalid(Path file, IOException e) {
    if (e instanceof InvalidOtlpJsonException) {
      return (InvalidOtlpJsonException) e;
    }
    if (e instanceof EOFException || e instanceof ZipException) {
      return new InvalidOtlpJsonException(file, "truncated or corrupt gzip", e);
    }
    if (e instanceof JsonProcessingException) {
      return new InvalidOtlpJsonException(file, "malformed JSON", e);
    }
    return new InvalidOtlpJsonException(file, "unreadable", e);
  }

  /**
   * What a file that is neither a regular file nor a directory is, in words ("a FIFO (named pipe)",
   * from the file type bits of {@code unix:mode}), for messages that refuse it; "a special file"
   * where the file system does not say.
   */
  public static String kind(Path file, LinkOption... options) {
    try {
      switch ((Integer) Files.getAttribute(file, "unix:mode", options) & 0170000) {
        case 0010000:
          return "a FIFO (named pipe)";
        case 0140000:
          return "a socket";
        case 0020000:
          return "a character device";
        case 0060000:
          return "a block device";
        default:
          break;
      }
    } catch (IOException
        | UnsupportedOperationException
        | IllegalArgumentException
        | ClassCastException e) {
      // no unix view: say it plainly
    }
    return "a special file";
  }

  /** Counts bytes read from the file and reports them as progress. */
  private static final class Counting extends FilterInputStream {
    private final ReadProgress progress;
    private final long base;
    private final long total;
    private long count;
    private long reported;

    Counting(InputStream in, ReadProgress progress, long base, long total) {
      super(in);
      this.progress = progress;
      this.base = base;
      this.total = total;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        advance(1);
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      if (n > 0) {
        advance(n);
      }
      return n;
    }

    private void advance(long n) {
      count += n;
      if (count - reported >= 1 << 20) {
        reported = count;
        progress.update(Math.min(total, base + count), total);
      }
    }
  }
}
