package dev.llmlat.gpu;

import static dev.llmlat.gpu.ImportFixtures.attr;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OtherFormatsTest {
  @ParameterizedTest
  @ValueSource(
      strings = {
        "h200-tinylm/nsys/cuda_events.jsonl",
        "h200-tinylm/kineto/cuda_events.jsonl",
        "h200-tinylm/unprofiled/b/cuda_events.jsonl",
        "h200-tinylm/unprofiled/c/cuda_events.jsonl",
        "h200-e2e/cuda_events.jsonl"
      })
  void cudaEventStepsAreSubmitPlusElapsed(String name) throws Exception {
    Path file = ImportFixtures.file(name);
    List<JsonNode> lines = ImportFixtures.lines(file);
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report = GpuImporter.importFile(file, ImportOptions.defaults(), sink);
    assertThat(report.format()).isEqualTo(ExportFormat.CUDA_EVENT_JSONL);
    assertThat(report.stepsMatched()).isEqualTo(lines.size());
    assertThat(sink.spans).hasSize(lines.size());
    // Records group a batch's spans by trace, so compare in submit order.
    lines.sort(java.util.Comparator.comparingLong(l -> l.get("host_submit_unix_ns").asLong()));
    List<Span> spans = new java.util.ArrayList<>(sink.spans);
    spans.sort(java.util.Comparator.comparingLong(Span::getStartTimeUnixNano));
    for (int i = 0; i < lines.size(); i++) {
      JsonNode l = lines.get(i);
      Span s = spans.get(i);
      long submit = l.get("host_submit_unix_ns").asLong();
      long elapsed =
          l.get("gpu_elapsed_ms")
              .decimalValue()
              .movePointRight(6)
              .setScale(0, java.math.RoundingMode.HALF_UP)
              .longValueExact();
      assertThat(s.getStartTimeUnixNano()).isEqualTo(submit);
      assertThat(s.getEndTimeUnixNano()).isEqualTo(submit + elapsed);
      assertThat(attr(s, LlmlatAttributes.STEP_KIND)).isEqualTo(l.get("kind").asText());
      assertThat(HexFormat.of().formatHex(s.getTraceId().toByteArray()))
          .isEqualTo(l.get("trace_ids").get(0).asText());
      assertThat(s.getLinksCount()).isEqualTo(l.get("trace_ids").size());
      assertThat(attr(s, LlmlatAttributes.CLOCK_RULE))
          .isEqualTo("cudaevent:host_submit_unix_ns+gpu_elapsed_ms*1e6");
      assertThat(attr(s, LlmlatAttributes.GPU_BUSY_NS)).isNull(); // not known from two events
    }
    // Each request's first step starts after it arrived.
    for (JsonNode r : ImportFixtures.lines(file.resolveSibling("requests.jsonl"))) {
      String id = r.get("trace_id").asText();
      long first =
          sink.spans.stream()
              .filter(s -> attr(s, LlmlatAttributes.TRACE_IDS).contains(id))
              .mapToLong(Span::getStartTimeUnixNano)
              .min()
              .getAsLong();
      assertThat(first).isGreaterThan(r.get("arrival_ns").asLong());
    }
    GpuSummary summary = GpuSummary.of(file);
    assertThat(summary.kernels()).isZero();
    assertThat(summary.totalNs())
        .isEqualTo(
            sink.spans.stream().mapToLong(Span::getEndTimeUnixNano).max().getAsLong()
                - sink.spans.stream().mapToLong(Span::getStartTimeUnixNano).min().getAsLong());
  }

  @Test
  void otlpJsonLinesFromTheAgentBecomeOneBatchPerLine() throws Exception {
    Path file = ImportFixtures.file("h200-e2e/gateway.otlp.jsonl");
    // How the file reads is otlp-json's OtlpJsonReaderTest; here, what the import reports and hands
    // on.
    List<JsonNode> lines = ImportFixtures.lines(file);
    long spans = 0;
    for (JsonNode l : lines) {
      for (JsonNode rs : l.get("resourceSpans")) {
        for (JsonNode ss : rs.get("scopeSpans")) {
          spans += ss.get("spans").size();
        }
      }
    }
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report = GpuImporter.importFile(file, ImportOptions.defaults(), sink);
    assertThat(report.format()).isEqualTo(ExportFormat.OTLP_JSON);
    assertThat(report.clockRule()).isEqualTo("otlp:as recorded");
    assertThat(sink.batches).hasSize(lines.size());
    assertThat(report.batches()).isEqualTo(lines.size());
    assertThat(report.spans()).isEqualTo(spans).isEqualTo(sink.spans.size());
  }

  @Test
  void ownKernelSpansRoundTripThroughOtlpJsonSummary() throws Exception {
    // The summary of an OTLP file counts spans carrying llmlat.gpu.kind; the gateway file has none.
    GpuSummary s = GpuSummary.of(ImportFixtures.file("h200-e2e/gateway.otlp.jsonl"));
    assertThat(s.kernels()).isZero();
    assertThat(s.busyNs()).isZero();
  }
}
