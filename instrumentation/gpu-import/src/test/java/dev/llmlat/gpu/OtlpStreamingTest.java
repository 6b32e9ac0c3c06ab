package dev.llmlat.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single-document OTLP/JSON file (one huge ExportTraceServiceRequest) is read span by span: it
 * imports under a heap far smaller than its spans would take as objects, in batches of the
 * configured size, and resources, scopes and schema URLs that the file puts after their spans still
 * reach every batch.
 */
class OtlpStreamingTest {
  @TempDir Path dir;

  /** One request, one resource, one scope, {@code n} spans of 16 traces; about 320 bytes a span. */
  private static Path singleDocument(Path file, int n) throws Exception {
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      w.write(
          "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":"
              + "{\"stringValue\":\"big\"}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"gen\"},\"spans\":[\n");
      for (int i = 0; i < n; i++) {
        if (i > 0) {
          w.write(",\n");
        }
        long start = 1_700_000_000_000_000_000L + i * 1000L;
        w.write(
            String.format(
                "{\"traceId\":\"%032x\",\"spanId\":\"%016x\",\"name\":\"op %d\",\"kind\":2,"
                    + "\"startTimeUnixNano\":\"%d\",\"endTimeUnixNano\":\"%d\",\"attributes\":[{\"key\":\"http.route\","
                    + "\"value\":{\"stringValue\":\"/v1/chat/completions\"}},{\"key\":\"n\",\"value\":{\"intValue\":\"%d\"}}],"
                    + "\"status\":{}}",
                (i % 16) + 1, i + 1L, i, start, start + 500, i));
      }
      w.write("\n]}]}]}\n");
    }
    return file;
  }

  @Test
  void aHugeSingleDocumentImportsInBoundedMemory() throws Exception {
    // 100k spans: 32 MB of JSON. Read whole, as the former reader did, they took more than 850
    // bytes a span (it ran out of a 256 MB heap at 300k, of 48 MB at 150k; 2.9 GB RSS for 1M).
    // Streamed, the import fits a 32 MB heap, the repeat check's fingerprints included.
    int n = 100_000;
    Path file = singleDocument(dir.resolve("big.otlp.json"), n);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path log = dir.resolve("child.log");
    Process p =
        new ProcessBuilder(
                java,
                "-Xmx32m",
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                OtlpStreamingMain.class.getName(),
                file.toString(),
                "1000")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("the import finished").isTrue();
    } finally {
      p.destroyForcibly();
    }
    String out = Files.readString(log);
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out)
        .contains(
            "spans=" + n + " reported=" + n + " batches=" + n / 1000 + " maxBatch=1000 warnings=0");
  }

  @Test
  void resourcesAndScopesAfterTheirSpansReachEveryBatch() throws Exception {
    // Fields in any order: the Collector writes schemaUrl after the spans; here resource and scope
    // come late too.
    String span =
        "{\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"spanId\":\"%016x\",\"name\":\"s%d\","
            + "\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"}";
    StringBuilder spans = new StringBuilder();
    for (int i = 0; i < 5; i++) {
      spans.append(i > 0 ? "," : "").append(String.format(span, i + 1, i));
    }
    Path file = dir.resolve("late.otlp.json");
    Files.writeString(
        file,
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":["
            + spans
            + "],\"scope\":{\"name\":\"lib\","
            + "\"version\":\"1.2\"},\"schemaUrl\":\"https://opentelemetry.io/schemas/1.2.0\"},{\"scope\":{\"name\":\"other\"},"
            + "\"spans\":["
            + String.format(span, 99, 99)
            + "]}],\"resource\":{\"attributes\":[{\"key\":\"service.name\","
            + "\"value\":{\"stringValue\":\"engine\"}}]},\"schemaUrl\":\"https://opentelemetry.io/schemas/1.1.0\"}]}");
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport r =
        GpuImporter.importFile(
            file, ExportFormat.OTLP_JSON, ImportOptions.defaults().withBatchSize(2), sink);

    assertThat(r.spans()).isEqualTo(6);
    assertThat(r.batches()).isEqualTo(3);
    assertThat(sink.batches).allSatisfy(b -> assertThat(b.spanCount()).isLessThanOrEqualTo(2));
    int seen = 0;
    for (ExportTraceServiceRequest req : sink.records) {
      for (ResourceSpans rs : req.getResourceSpansList()) {
        assertThat(rs.getResource().getAttributes(0).getValue().getStringValue())
            .isEqualTo("engine");
        assertThat(rs.getSchemaUrl()).isEqualTo("https://opentelemetry.io/schemas/1.1.0");
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          if (ss.getSpans(0).getName().equals("s99")) {
            assertThat(ss.getScope().getName()).isEqualTo("other");
            assertThat(ss.getSchemaUrl()).isEmpty();
          } else {
            assertThat(ss.getScope().getName()).isEqualTo("lib");
            assertThat(ss.getScope().getVersion()).isEqualTo("1.2");
            assertThat(ss.getSchemaUrl()).isEqualTo("https://opentelemetry.io/schemas/1.2.0");
          }
          seen += ss.getSpansCount();
        }
      }
    }
    assertThat(seen).isEqualTo(6);
  }
}
