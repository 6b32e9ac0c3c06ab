package dev.llmlat.analyze;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The H200 captures of ../shared/traces/h200-tinylm (Nsight and PyTorch-profiler runs): the GPU
 * export imported as it is, the engine's requests.jsonl turned into engine spans through OTLP/JSON
 * (first token at the end of the request's prefill step, decode tokens at the end of its decode
 * steps, both from the capture's own cudaEvent log), then attributed. Expected figures come from
 * the raw files.
 */
class H200TinyLmTest {
  static final ObjectMapper JSON = new ObjectMapper();
  @TempDir Path dir;

  record Step(String kind, List<String> traces, long submit, long end) {}

  @ParameterizedTest
  @CsvSource({
    "nsys, nsys/nsys_b.sqlite, NSYS_SQLITE",
    "kineto, kineto/kineto_trace.json.gz, KINETO_JSON"
  })
  void everyRequestIsAttributedConsistentlyWithTheCapture(
      String run, String export, ExportFormat format) throws IOException {
    Path root = dev.llmlat.sharedtraces.SharedTraces.resolve("h200-tinylm");
    List<Step> steps = new ArrayList<>();
    for (String line : Files.readAllLines(root.resolve(run).resolve("cuda_events.jsonl"))) {
      JsonNode s = JSON.readTree(line);
      List<String> traces = new ArrayList<>();
      s.get("trace_ids").forEach(t -> traces.add(t.asText()));
      long submit = s.get("host_submit_unix_ns").asLong();
      steps.add(
          new Step(
              s.get("kind").asText(),
              traces,
              submit,
              submit + Math.round(s.get("gpu_elapsed_ms").asDouble() * 1e6)));
    }
    List<JsonNode> requests = new ArrayList<>();
    StringBuilder lines = new StringBuilder();
    for (String line : Files.readAllLines(root.resolve(run).resolve("requests.jsonl"))) {
      JsonNode r = JSON.readTree(line);
      requests.add(r);
      String t = r.get("trace_id").asText();
      List<Step> mine = steps.stream().filter(s -> s.traces().contains(t)).toList();
      long firstToken = mine.get(0).end();
      ObjectNode doc = JSON.createObjectNode();
      ObjectNode rs = doc.putArray("resourceSpans").addObject();
      ArrayNode attrs = rs.putObject("resource").putArray("attributes");
      attr(attrs, "service.name", "engine");
      attr(attrs, "llmlat.layer", "engine");
      ArrayNode spans = rs.putArray("scopeSpans").addObject().putArray("spans");
      ObjectNode request =
          span(
              spans,
              t,
              t.substring(0, 16),
              r.get("parent_span_id").asText(),
              "llm_request",
              2,
              r.get("arrival_ns").asLong(),
              r.get("finish_ns").asLong());
      ObjectNode event = request.putArray("events").addObject();
      event.put("name", "llmlat.first_token");
      event.put("timeUnixNano", Long.toString(firstToken));
      ObjectNode decode =
          span(
              spans,
              t,
              t.substring(16),
              t.substring(0, 16),
              "decode",
              1,
              firstToken,
              r.get("finish_ns").asLong());
      ArrayNode deltas =
          decode
              .putArray("attributes")
              .addObject()
              .put("key", "llmlat.decode.token_deltas_ns")
              .putObject("value")
              .putObject("arrayValue")
              .putArray("values");
      long previous = firstToken;
      for (Step s : mine.subList(1, mine.size())) {
        deltas.addObject().put("intValue", Long.toString(s.end() - previous));
        previous = s.end();
      }
      lines.append(JSON.writeValueAsString(doc)).append('\n');
    }
    Path engine = dir.resolve("engine.otlp.jsonl");
    Files.writeString(engine, lines);

    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      for (Object[] file :
          new Object[][] {{engine, ExportFormat.OTLP_JSON}, {root.resolve(export), format}}) {
        try (StoreImportTarget target = new StoreImportTarget(store)) {
          GpuImporter.importFile(
              (Path) file[0],
              (ExportFormat) file[1],
              ImportOptions.defaults().withServiceName("engine"),
              target);
          target.commit();
        }
      }
      assertThat(new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true).written())
          .isEqualTo(requests.size());
      Analyzer analyzer = new Analyzer(store);
      for (JsonNode r : requests) {
        String t = r.get("trace_id").asText();
        Attribution a = analyzer.explain(t);
        List<Step> mine = steps.stream().filter(s -> s.traces().contains(t)).toList();
        Step prefill = mine.get(0);
        long arrival = r.get("arrival_ns").asLong();
        assertThat(prefill.kind()).isEqualTo("prefill");
        assertThat(a.startLayer()).isEqualTo("engine");
        assertThat(a.ttftNs()).as(t).isEqualTo(prefill.end() - arrival);
        assertThat(a.components().values().stream().mapToLong(Long::longValue).sum())
            .isEqualTo(a.ttftNs());
        // queued until the GPU began its prefill step, which the host submitted after the arrival
        assertThat(a.component("queue"))
            .as(t)
            .isGreaterThanOrEqualTo(prefill.submit() - arrival)
            .isLessThan(a.ttftNs());
        // the prefill step: a little kernel time, much waiting for the host between launches (the
        // capture's finding)
        assertThat(a.component("prefill_gpu")).as(t).isPositive();
        assertThat(a.component("prefill_cpu")).as(t).isGreaterThan(5 * a.component("prefill_gpu"));
        assertThat(a.component("batch_interference"))
            .as(t)
            .isZero(); // prefill-first: one request per prefill step
        // one inter-token gap per decode step that served it, each the time between its steps' ends
        assertThat(a.itl()).hasSize(mine.size() - 1);
        for (int i = 1; i < mine.size(); i++) {
          assertThat(a.itl().get(i - 1).gapNs())
              .isEqualTo(mine.get(i).end() - mine.get(i - 1).end());
        }
        assertThat(a.itl().size() + 1).isEqualTo(r.get("generated").asInt());
      }
    }
  }

  static void attr(ArrayNode attrs, String key, String value) {
    ObjectNode a = attrs.addObject();
    a.put("key", key);
    a.putObject("value").put("stringValue", value);
  }

  static ObjectNode span(
      ArrayNode spans,
      String trace,
      String id,
      String parent,
      String name,
      int kind,
      long start,
      long end) {
    ObjectNode s = spans.addObject();
    s.put("traceId", trace);
    s.put("spanId", id);
    s.put("parentSpanId", parent);
    s.put("name", name);
    s.put("kind", kind);
    s.put("startTimeUnixNano", Long.toString(start));
    s.put("endTimeUnixNano", Long.toString(end));
    return s;
  }
}
