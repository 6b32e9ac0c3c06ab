package dev.llmlat.bench.faults;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;

/**
 * An OTLP/JSON file as the Collector's file exporter writes it (one request per line), of {@code
 * traces} traces with {@code spansPerTrace} engine spans each, for {@code llmlat import otlp-json}.
 */
final class OtlpJsonFile {
  private OtlpJsonFile() {}

  /** Writes the file; returns its trace ids (hex). */
  static List<String> write(Path file, int traces, int spansPerTrace, Random random)
      throws IOException {
    HexFormat hex = HexFormat.of();
    List<String> ids = new ArrayList<>();
    long t = 1_795_946_400_000_000_000L;
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (int i = 0; i < traces; i++) {
        byte[] traceId = new byte[16];
        random.nextBytes(traceId);
        ids.add(hex.formatHex(traceId));
        StringBuilder spans = new StringBuilder();
        for (int s = 0; s < spansPerTrace; s++) {
          byte[] spanId = new byte[8];
          random.nextBytes(spanId);
          long start = t + (i * 1000L + s) * 1_000_000L;
          spans
              .append(s == 0 ? "" : ",")
              .append("{\"traceId\":\"")
              .append(ids.getLast())
              .append("\",\"spanId\":\"")
              .append(hex.formatHex(spanId))
              .append("\",\"name\":\"decode\",\"kind\":1,\"startTimeUnixNano\":\"")
              .append(start)
              .append("\",\"endTimeUnixNano\":\"")
              .append(start + 500_000)
              .append("\"}");
        }
        w.write(
            "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"llm-engine\"}},"
                + "{\"key\":\"llmlat.layer\",\"value\":{\"stringValue\":\"engine\"}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"faults\"},\"spans\":["
                + spans
                + "]}]}]}\n");
      }
    }
    return ids;
  }
}
