package dev.llmlat.gpu.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/** Opens JSON exports, plain or gzip, counting compressed bytes for progress. */
public final class Inputs {
  static final JsonFactory JSON = JsonFactory.builder()
      // Kineto kernel names can be several KiB; documents can be large.
      .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(64 * 1024 * 1024)
          .maxDocumentLength(-1).build())
      .build();

  private Inputs() {}

  /** Counts bytes read from the file and reports them as progress. */
  public static final class Counting extends FilterInputStream {
    private final ImportProgress progress;
    private final long base;
    private final long total;
    private long count;
    private long reported;

    Counting(InputStream in, ImportProgress progress, long base, long total) {
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

  public static boolean isGzip(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      return in.read() == 0x1f && in.read() == 0x8b;
    }
  }

  /**
   * Opens the file, decompressing gzip, and reports {@code base + bytes read} of {@code total}.
   */
  public static InputStream open(Path file, ImportProgress progress, long base, long total) throws IOException {
    checkReadable(file);
    if (Files.size(file) == 0) {
      throw new InvalidExportException(file, "empty file");
    }
    boolean gzip = isGzip(file);
    InputStream raw = new Counting(new BufferedInputStream(Files.newInputStream(file), 1 << 16), progress, base,
        total);
    return gzip ? new GZIPInputStream(raw, 1 << 16) : raw;
  }

  /**
   * Refuses a path that is no readable regular file, saying which: missing, a directory, a FIFO or
   * other special file (an import reads its file twice, a pass to check and a pass to emit, which a
   * pipe cannot give), or not readable.
   */
  public static void checkReadable(Path file) throws InvalidExportException {
    if (Files.isRegularFile(file)) {
      if (!Files.isReadable(file)) {
        throw new InvalidExportException(file, "permission denied (the file is not readable)");
      }
      return;
    }
    if (Files.isDirectory(file)) {
      throw new InvalidExportException(file, "is a directory, not an export file");
    }
    if (Files.exists(file)) {
      throw new InvalidExportException(file, "is " + kind(file) + ", not a regular file: an import reads the file twice"
          + " (checks it, then imports it), so save the export to a file first");
    }
    Path dir = file.toAbsolutePath().getParent();
    throw new InvalidExportException(file, dir != null && !Files.isDirectory(dir) ? "no such file (directory " + dir
        + " does not exist)" : "no such file");
  }

  /** What a special file is, in words (the file type bits of {@code unix:mode}). */
  private static String kind(Path file) {
    try {
      switch ((Integer) Files.getAttribute(file, "unix:mode") & 0170000) {
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
    } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
      // no unix view: say it plainly
    }
    return "a special file";
  }

  public static JsonParser parser(InputStream in) throws IOException {
    return JSON.createParser(in);
  }

  /** Maps a read failure to the file's problem in words. */
  public static InvalidExportException invalid(Path file, IOException e) {
    if (e instanceof InvalidExportException) {
      return (InvalidExportException) e;
    }
    if (e instanceof java.io.EOFException || e instanceof java.util.zip.ZipException) {
      return new InvalidExportException(file, "truncated or corrupt gzip", e);
    }
    if (e instanceof com.fasterxml.jackson.core.JsonProcessingException) {
      return new InvalidExportException(file, "malformed JSON", e);
    }
    return new InvalidExportException(file, "unreadable", e);
  }
}
