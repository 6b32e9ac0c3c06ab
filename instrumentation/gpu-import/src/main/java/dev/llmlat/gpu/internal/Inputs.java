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
    if (!Files.isRegularFile(file)) {
      throw new InvalidExportException(file, "no such file");
    }
    if (Files.size(file) == 0) {
      throw new InvalidExportException(file, "empty file");
    }
    boolean gzip = isGzip(file);
    InputStream raw = new Counting(new BufferedInputStream(Files.newInputStream(file), 1 << 16), progress, base,
        total);
    return gzip ? new GZIPInputStream(raw, 1 << 16) : raw;
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
