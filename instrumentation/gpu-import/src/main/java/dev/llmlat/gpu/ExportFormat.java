package dev.llmlat.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.zip.GZIPInputStream;

/**
 * The GPU export formats this library reads; {@link #detect} picks one from a file's first bytes.
 */
public enum ExportFormat {
  /** {@code nsys export --type sqlite}. */
  NSYS_SQLITE("nsys"),
  /** PyTorch profiler / Kineto Chrome trace, {@code .json} or {@code .json.gz}. */
  KINETO_JSON("kineto"),
  /**
   * One JSON object per engine step bracketed by two CUDA events; see
   * schemas/formats/gpu-exports.md.
   */
  CUDA_EVENT_JSONL("cudaevent"),
  /**
   * OTLP/JSON as the Collector's file exporter writes it (one request per line, or one document).
   */
  OTLP_JSON("otlp");

  private final String source;

  ExportFormat(String source) {
    this.source = source;
  }

  /** The value of {@code llmlat.gpu.source} spans from this format carry (OTLP keeps its own). */
  public String source() {
    return source;
  }

  /**
   * Parses a user's spelling: {@code nsys}, {@code kineto}, {@code cudaevent}, {@code otlp}
   * (case-insensitive).
   */
  public static ExportFormat of(String name) {
    String n = name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
    for (ExportFormat f : values()) {
      if (f.source.equals(n) || f.name().toLowerCase(Locale.ROOT).replace("_", "").equals(n)) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        "unknown export format '" + name + "' (nsys, kineto, cudaevent, otlp)");
  }

  /**
   * Recognizes a file by content: the sqlite header, or the first JSON key ({@code traceEvents} or
   * Chrome-trace keys → Kineto, {@code resourceSpans} → OTLP, {@code host_submit_unix_ns} →
   * cudaEvent); gzip is looked through.
   */
  public static ExportFormat detect(Path file) throws IOException {
    dev.llmlat.gpu.internal.Inputs.checkReadable(file);
    if (Files.size(file) == 0) {
      throw new InvalidExportException(file, "empty file");
    }
    byte[] head;
    try (InputStream in = Files.newInputStream(file)) {
      head = in.readNBytes(16);
    }
    if (new String(head, java.nio.charset.StandardCharsets.ISO_8859_1)
        .startsWith("SQLite format 3")) {
      return NSYS_SQLITE;
    }
    String text;
    try (InputStream raw = Files.newInputStream(file);
        InputStream in =
            (head.length >= 2 && (head[0] & 0xff) == 0x1f && (head[1] & 0xff) == 0x8b)
                ? new GZIPInputStream(raw)
                : raw) {
      text = new String(in.readNBytes(64 * 1024), java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new InvalidExportException(file, "unreadable (corrupt or truncated gzip?)", e);
    }
    int resource = indexOrMax(text, "\"resourceSpans\"");
    int events = indexOrMax(text, "\"traceEvents\"");
    int submit = indexOrMax(text, "\"host_submit_unix_ns\"");
    int min = Math.min(resource, Math.min(events, submit));
    if (min == Integer.MAX_VALUE) {
      if (text.contains("\"schemaVersion\"") || text.contains("\"deviceProperties\"")) {
        return KINETO_JSON;
      }
      throw new InvalidExportException(
          file,
          "not a known GPU export: no traceEvents, resourceSpans or "
              + "host_submit_unix_ns in the first 64 KiB");
    }
    return min == events ? KINETO_JSON : min == resource ? OTLP_JSON : CUDA_EVENT_JSONL;
  }

  private static int indexOrMax(String text, String key) {
    int i = text.indexOf(key);
    return i < 0 ? Integer.MAX_VALUE : i;
  }
}
