package dev.llmlat.store.http;

import java.util.Locale;
import java.util.Set;

/**
 * What the front end knows about an output format: its Content-Type, and whether the engine's
 * streamed chunks (each a complete output of its own) join into one valid result, as they do for
 * formats without a header or footer, or after dropping the repeated header of the later chunks.
 */
record OutputFormat(String name) {
  /** Chunks concatenate as they are. */
  private static final Set<String> PLAIN =
      Set.of(
          "TABSEPARATED",
          "TSV",
          "TABSEPARATEDRAW",
          "TSVRAW",
          "RAW",
          "CSV",
          "JSONEACHROW",
          "JSONLINES",
          "NDJSON",
          "JSONCOMPACTEACHROW",
          "JSONSTRINGSEACHROW",
          "JSONCOMPACTSTRINGSEACHROW",
          "ROWBINARY",
          "NATIVE",
          "LINEASSTRING");

  /** Chunks after the first start with a header of these many text lines. */
  private static final Set<String> ONE_HEADER_LINE =
      Set.of(
          "TABSEPARATEDWITHNAMES", "TSVWITHNAMES", "CSVWITHNAMES", "JSONCOMPACTEACHROWWITHNAMES");

  private static final Set<String> TWO_HEADER_LINES =
      Set.of(
          "TABSEPARATEDWITHNAMESANDTYPES",
          "TSVWITHNAMESANDTYPES",
          "CSVWITHNAMESANDTYPES",
          "JSONCOMPACTEACHROWWITHNAMESANDTYPES");

  private String key() {
    return name.toUpperCase(Locale.ROOT);
  }

  /** How to join streamed chunks, or null when the format cannot be streamed chunk by chunk. */
  ChunkHeader chunkHeader() {
    String k = key();
    if (PLAIN.contains(k)) {
      return ChunkHeader.NONE;
    }
    if (ONE_HEADER_LINE.contains(k)) {
      return ChunkHeader.ONE_LINE;
    }
    if (TWO_HEADER_LINES.contains(k)) {
      return ChunkHeader.TWO_LINES;
    }
    if (k.equals("ROWBINARYWITHNAMESANDTYPES")) {
      return ChunkHeader.ROW_BINARY_NAMES_AND_TYPES;
    }
    if (k.equals("ROWBINARYWITHNAMES")) {
      return ChunkHeader.ROW_BINARY_NAMES;
    }
    return null;
  }

  /** The header each streamed chunk repeats. */
  enum ChunkHeader {
    NONE,
    ONE_LINE,
    TWO_LINES,
    ROW_BINARY_NAMES,
    ROW_BINARY_NAMES_AND_TYPES
  }

  /**
   * The Content-Type ClickHouse sends for the format (close enough for clients, which read
   * X-ClickHouse-Format).
   */
  String contentType() {
    String k = key();
    if (k.startsWith("TABSEPARATED") || k.startsWith("TSV")) {
      return "text/tab-separated-values; charset=UTF-8";
    }
    if (k.startsWith("CSV")) {
      return "text/csv; charset=UTF-8; header=" + (k.contains("WITHNAMES") ? "present" : "absent");
    }
    if (k.startsWith("JSON") || k.equals("NDJSON")) {
      return k.contains("EACHROW") || k.equals("JSONLINES") || k.equals("NDJSON")
          ? "application/x-ndjson; charset=UTF-8"
          : "application/json; charset=UTF-8";
    }
    if (k.startsWith("ROWBINARY")
        || k.equals("NATIVE")
        || k.equals("PARQUET")
        || k.startsWith("ARROW")
        || k.equals("ORC")
        || k.equals("AVRO")
        || k.startsWith("PROTOBUF")
        || k.equals("MSGPACK")
        || k.equals("BSONEACHROW")) {
      return "application/octet-stream";
    }
    if (k.equals("XML")) {
      return "application/xml; charset=UTF-8";
    }
    return "text/plain; charset=UTF-8";
  }
}
