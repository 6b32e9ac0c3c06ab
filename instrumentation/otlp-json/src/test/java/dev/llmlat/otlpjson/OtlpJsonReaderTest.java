package dev.llmlat.otlpjson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.sharedtraces.SharedTraces;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OtlpJsonReaderTest {
  @TempDir Path dir;

  private static List<Span> spans(List<ExportTraceServiceRequest> requests) {
    List<Span> out = new ArrayList<>();
    for (ExportTraceServiceRequest r : requests) {
      for (ResourceSpans rs : r.getResourceSpansList()) {
        for (ScopeSpans ss : rs.getScopeSpansList()) {
          out.addAll(ss.getSpansList());
        }
      }
    }
    return out;
  }

  private static String attr(Span s, String key) {
    return s.getAttributesList().stream()
        .filter(kv -> kv.getKey().equals(key))
        .map(KeyValue::getValue)
        .map(v -> v.getStringValue())
        .findFirst()
        .orElse(null);
  }

  /**
   * The file's non-blank lines as JSON trees: the plain reading the streaming reader is checked
   * against.
   */
  private static List<JsonNode> lines(Path file) throws java.io.IOException {
    ObjectMapper json = new ObjectMapper();
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      if (!line.isBlank()) {
        out.add(json.readTree(line));
      }
    }
    return out;
  }

  @Test
  void otlpSpecExampleKeepsHexIdsIntEnumsAndStringInt64() throws Exception {
    Path file = SharedTraces.resolve("public/otlp__opentelemetry-proto_example_trace.json");
    List<ExportTraceServiceRequest> requests = new ArrayList<>();
    assertThat(new OtlpJsonReader(file).readRequests(requests::add)).isEqualTo(1);
    List<Span> spans = spans(requests);
    assertThat(spans).hasSize(1);
    Span s = spans.get(0);
    assertThat(HexFormat.of().formatHex(s.getTraceId().toByteArray()))
        .isEqualTo("5b8efff798038103d269b633813fc60c");
    assertThat(HexFormat.of().formatHex(s.getSpanId().toByteArray())).isEqualTo("eee19b7ec3c1b174");
    assertThat(HexFormat.of().formatHex(s.getParentSpanId().toByteArray()))
        .isEqualTo("eee19b7ec3c1b173");
    assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
    assertThat(s.getStartTimeUnixNano()).isEqualTo(1544712660000000000L);
    assertThat(s.getEndTimeUnixNano() - s.getStartTimeUnixNano()).isEqualTo(1_000_000_000L);
    assertThat(attr(s, "my.span.attr")).isEqualTo("some value");
    ResourceSpans rs = requests.get(0).getResourceSpans(0);
    assertThat(rs.getResource().getAttributes(0).getKey()).isEqualTo("service.name");
    assertThat(rs.getResource().getAttributes(0).getValue().getStringValue())
        .isEqualTo("my.service");
    assertThat(rs.getScopeSpans(0).getScope().getName()).isEqualTo("my.library");
    assertThat(rs.getScopeSpans(0).getScope().getVersion()).isEqualTo("1.0.0");
  }

  @Test
  void agentLinesAreOneBatchEachWithEverySpanOfTheLine() throws Exception {
    Path file = SharedTraces.resolve("h200-e2e/gateway.otlp.jsonl");
    List<JsonNode> lines = lines(file);
    List<Integer> spansPerLine = new ArrayList<>();
    long server = 0;
    for (JsonNode l : lines) {
      int n = 0;
      for (JsonNode rs : l.get("resourceSpans")) {
        for (JsonNode ss : rs.get("scopeSpans")) {
          for (JsonNode sp : ss.get("spans")) {
            n++;
            if (sp.get("kind").asInt() == 2) {
              server++;
            }
          }
        }
      }
      spansPerLine.add(n);
    }
    List<ExportTraceServiceRequest> batches = new ArrayList<>();
    long requests =
        new OtlpJsonReader(file)
            .readBatches(1000, ReadProgress.NONE, 0, Files.size(file), batches::add);

    assertThat(requests).isEqualTo(lines.size());
    assertThat(batches).hasSize(lines.size());
    assertThat(batches)
        .extracting(b -> spans(List.of(b)).size())
        .containsExactlyElementsOf(spansPerLine);
    List<Span> spans = spans(batches);
    assertThat(spans.stream().filter(s -> s.getKind() == Span.SpanKind.SPAN_KIND_SERVER).count())
        .isEqualTo(server)
        .isEqualTo(16);
    JsonNode firstSpan =
        lines.get(0).get("resourceSpans").get(0).get("scopeSpans").get(0).get("spans").get(0);
    assertThat(HexFormat.of().formatHex(spans.get(0).getTraceId().toByteArray()))
        .isEqualTo(firstSpan.get("traceId").asText().toLowerCase());
    assertThat(spans.get(0).getStartTimeUnixNano())
        .isEqualTo(new BigDecimal(firstSpan.get("startTimeUnixNano").asText()).longValueExact());
  }

  @Test
  void gzipReadsAsThePlainFileDoes() throws Exception {
    Path plain = SharedTraces.resolve("h200-e2e/gateway.otlp.jsonl");
    Path gz = dir.resolve("gateway.otlp.jsonl.gz");
    try (OutputStream out = new GZIPOutputStream(Files.newOutputStream(gz))) {
      Files.copy(plain, out);
    }
    List<ExportTraceServiceRequest> fromPlain = new ArrayList<>();
    List<ExportTraceServiceRequest> fromGzip = new ArrayList<>();
    new OtlpJsonReader(plain).readRequests(fromPlain::add);
    new OtlpJsonReader(gz).readRequests(fromGzip::add);
    assertThat(fromGzip).isEqualTo(fromPlain).isNotEmpty();
  }

  @Test
  void resourcesAndScopesAfterTheirSpansReachEveryBatchOfAFreshReader() throws Exception {
    // The Collector writes schemaUrl after the spans; here resource and scope come late too.
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
            + "],\"scope\":{\"name\":\"lib\"},"
            + "\"schemaUrl\":\"https://opentelemetry.io/schemas/1.2.0\"}],\"resource\":{\"attributes\":[{\"key\":"
            + "\"service.name\",\"value\":{\"stringValue\":\"engine\"}}]},\"schemaUrl\":\"https://opentelemetry.io/schemas/1.1.0\"}]}");
    List<ExportTraceServiceRequest> batches = new ArrayList<>();
    new OtlpJsonReader(file).readBatches(2, ReadProgress.NONE, 0, 0, batches::add);

    assertThat(batches).hasSize(3); // 2 + 2 + 1 spans
    for (ExportTraceServiceRequest b : batches) {
      ResourceSpans rs = b.getResourceSpans(0);
      assertThat(rs.getResource().getAttributes(0).getValue().getStringValue()).isEqualTo("engine");
      assertThat(rs.getSchemaUrl()).isEqualTo("https://opentelemetry.io/schemas/1.1.0");
      assertThat(rs.getScopeSpans(0).getScope().getName()).isEqualTo("lib");
      assertThat(rs.getScopeSpans(0).getSchemaUrl())
          .isEqualTo("https://opentelemetry.io/schemas/1.2.0");
    }
    assertThat(spans(batches))
        .extracting(Span::getName)
        .containsExactly("s0", "s1", "s2", "s3", "s4");
  }

  @Test
  void spansComeWithTheirPositionAndGroup() throws Exception {
    Path file = dir.resolve("two.otlp.jsonl");
    String ids =
        "\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"";
    Files.writeString(
        file,
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"scope\":{\"name\":\"a\"},\"spans\":[{"
            + ids
            + ",\"spanId\":\"0000000000000001\",\"name\":\"x\"}]}]}]}\n{\"resourceSpans\":[{\"scopeSpans\":[{\"scope\":"
            + "{\"name\":\"b\"},\"spans\":[{"
            + ids
            + ",\"spanId\":\"0000000000000002\"},{"
            + ids
            + ",\"spanId\":\"0000000000000003\",\"name\":\"z\"}]}]}]}\n");
    List<String> seen = new ArrayList<>();
    long requests =
        new OtlpJsonReader(file)
            .read(
                new SpanVisitor() {
                  @Override
                  public void span(ScopeGroup group, Span span, SpanPosition where) {
                    seen.add(group.scope().getName() + " " + where.describe());
                  }

                  @Override
                  public void endRequest() {
                    seen.add("end");
                  }
                });
    assertThat(requests).isEqualTo(2);
    assertThat(seen)
        .containsExactly(
            "a request 1 (line 1), resourceSpans[0].scopeSpans[0].spans[0] 'x' (line 1)",
            "end",
            "b request 2 (line 2), resourceSpans[0].scopeSpans[0].spans[0] (line 2)",
            "b request 2 (line 2), resourceSpans[0].scopeSpans[0].spans[1] 'z' (line 2)",
            "end");
  }

  @Test
  void aBadSpanNamesTheFileAndWhereItIs() throws Exception {
    Path file = dir.resolve("bad.otlp.jsonl");
    Files.writeString(
        file,
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[\n{\"traceId\":"
            + "\"00000000000000000000000000000000\",\"spanId\":\"eee19b7ec3c1b174\",\"name\":\"GET /v1\","
            + "\"startTimeUnixNano\":\"1\",\"endTimeUnixNano\":\"2\"}]}]}]}\n");
    List<Span> before = new ArrayList<>();
    assertThatThrownBy(() -> new OtlpJsonReader(file).read((g, s, w) -> before.add(s)))
        .isInstanceOfSatisfying(
            InvalidOtlpJsonException.class,
            e -> {
              assertThat(e.file()).isEqualTo(file);
              assertThat(e.problem())
                  .isEqualTo(
                      "request 1 (line 1), resourceSpans[0].scopeSpans[0].spans[0] 'GET /v1' "
                          + "(line 2): traceId is all zeros (an invalid trace id)");
              assertThat(e.getMessage()).isEqualTo(file + ": " + e.problem());
            });
    assertThat(before).isEmpty();
  }

  @Test
  void aValueItsFieldCannotHoldNamesTheFieldAndTheLine() throws Exception {
    Path file = dir.resolve("range.otlp.jsonl");
    Files.writeString(
        file,
        "{\"resourceSpans\":[{\"resource\":{\"droppedAttributesCount\":-1},\"scopeSpans\":[]}]}\n");
    assertThatThrownBy(() -> new OtlpJsonReader(file).read((g, s, w) -> {}))
        .isInstanceOf(InvalidOtlpJsonException.class)
        .hasMessage(
            file
                + ": request 1 (line 1), resourceSpans[0].resource: droppedAttributesCount: -1 is negative "
                + "(uint32) (line 1)");
  }

  @Test
  void malformedJsonAndEmptyFilesAreRefusedInWords() throws Exception {
    Path broken = dir.resolve("broken.otlp.json");
    Files.writeString(broken, "{\"resourceSpans\":[{");
    assertThatThrownBy(() -> new OtlpJsonReader(broken).readRequests(r -> {}))
        .isInstanceOf(InvalidOtlpJsonException.class)
        .hasMessageStartingWith(broken + ": malformed JSON (");
    Path empty = Files.createFile(dir.resolve("empty.otlp.json"));
    assertThatThrownBy(() -> new OtlpJsonReader(empty).readRequests(r -> {}))
        .isInstanceOf(InvalidOtlpJsonException.class)
        .hasMessage(empty + ": empty file");
    Path missing = dir.resolve("missing.otlp.json");
    assertThatThrownBy(() -> new OtlpJsonReader(missing).readRequests(r -> {}))
        .isInstanceOf(InvalidOtlpJsonException.class)
        .hasMessage(missing + ": no such file");
  }
}
