package dev.llmlat.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanSink;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPInputStream;

/**
 * The shared traces (found by the one lookup every module's tests use) and the readings
 * gpu-import's tests share.
 */
final class ImportFixtures {
  static final ObjectMapper JSON =
      new ObjectMapper()
          .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  private ImportFixtures() {}

  static Path root() {
    return dev.llmlat.sharedtraces.SharedTraces.root();
  }

  static Path file(String relative) {
    return root().resolve(relative);
  }

  static JsonNode tree(Path file) throws IOException {
    try (InputStream raw = Files.newInputStream(file);
        InputStream in = file.toString().endsWith(".gz") ? new GZIPInputStream(raw) : raw) {
      return JSON.readTree(in);
    }
  }

  static List<JsonNode> lines(Path file) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      if (!line.isBlank()) {
        out.add(JSON.readTree(line));
      }
    }
    return out;
  }

  /**
   * Collects every batch and flattens the spans, checking each record on the way: it parses, its
   * spans all carry the record's trace id, and its bytes are exactly what protobuf-java writes for
   * the parsed message (the hand-written encoder must not drift from the library's encoding).
   */
  static final class Collector implements SpanSink {
    final List<SpanBatch> batches = new ArrayList<>();
    final List<ExportTraceServiceRequest> records = new ArrayList<>();
    final List<Span> spans = new ArrayList<>();

    @Override
    public void accept(SpanBatch batch) {
      batches.add(batch);
      List<ExportTraceServiceRequest> parsed = batch.requests();
      int count = 0;
      for (int i = 0; i < parsed.size(); i++) {
        ExportTraceServiceRequest r = parsed.get(i);
        assertThat(r.toByteArray()).as("record %d re-encoded", i).isEqualTo(batch.record(i));
        String traceId = batch.traceId(i);
        for (var rs : r.getResourceSpansList()) {
          for (var ss : rs.getScopeSpansList()) {
            for (Span s : ss.getSpansList()) {
              assertThat(HexFormat.of().formatHex(s.getTraceId().toByteArray())).isEqualTo(traceId);
              spans.add(s);
              count++;
            }
          }
        }
        records.add(r);
      }
      assertThat(count).isEqualTo(batch.spanCount());
    }
  }

  static String attr(Span s, String key) {
    return s.getAttributesList().stream()
        .filter(kv -> kv.getKey().equals(key))
        .findFirst()
        .map(
            kv ->
                kv.getValue().hasArrayValue()
                    ? kv.getValue().getArrayValue().getValuesList().stream()
                        .map(v -> v.getStringValue())
                        .reduce((a, b) -> a + "," + b)
                        .orElse("")
                    : kv.getValue().getValueCase()
                            == io.opentelemetry.proto.common.v1.AnyValue.ValueCase.INT_VALUE
                        ? Long.toString(kv.getValue().getIntValue())
                        : kv.getValue().getStringValue())
        .orElse(null);
  }

  /** Union length of [start, end) pairs, the plain way. */
  static long union(List<long[]> intervals) {
    List<long[]> sorted = new ArrayList<>(intervals);
    sorted.sort((a, b) -> Long.compare(a[0], b[0]));
    long total = 0;
    long s = Long.MIN_VALUE;
    long e = Long.MIN_VALUE;
    for (long[] iv : sorted) {
      if (iv[0] > e) {
        if (e > s) {
          total += e - s;
        }
        s = iv[0];
        e = iv[1];
      } else {
        e = Math.max(e, iv[1]);
      }
    }
    if (e > s) {
      total += e - s;
    }
    return total;
  }
}
