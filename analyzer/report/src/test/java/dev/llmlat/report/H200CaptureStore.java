package dev.llmlat.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Fills a store from ../shared/traces/h200-e2e the way H200EndToEndTest does (same imports), then
 * attributes it.
 */
final class H200CaptureStore {
  private static final ObjectMapper JSON = new ObjectMapper();

  private H200CaptureStore() {}

  static Path traces() {
    return dev.llmlat.sharedtraces.SharedTraces.resolve("h200-e2e");
  }

  /**
   * Migrates, imports the three layers and runs the analyzer; returns how many requests it wrote.
   */
  static long populate(EmbeddedClickHouse store, Path scratch) throws IOException {
    SchemaMigrator.bundled().migrate(store);
    importInto(
        store,
        traces().resolve("gateway.otlp.jsonl"),
        ExportFormat.OTLP_JSON,
        ImportOptions.defaults());
    importInto(store, engineSpans(scratch), ExportFormat.OTLP_JSON, ImportOptions.defaults());
    importInto(
        store,
        traces().resolve("engine.sqlite"),
        ExportFormat.NSYS_SQLITE,
        ImportOptions.defaults().withServiceName("engine").withHostName("vm"));
    return new Analyzer(store).analyze(0, Long.MAX_VALUE / 2, true).written();
  }

  private static void importInto(
      EmbeddedClickHouse store, Path file, ExportFormat format, ImportOptions options)
      throws IOException {
    try (StoreImportTarget target = new StoreImportTarget(store)) {
      assertThat(GpuImporter.importFile(file, format, options, target).spans()).isPositive();
      target.commit();
    }
  }

  /**
   * requests.jsonl as OTLP/JSON engine spans: llm_request from arrival to finish, first token as an
   * event.
   */
  private static Path engineSpans(Path scratch) throws IOException {
    StringBuilder lines = new StringBuilder();
    for (String line : Files.readAllLines(traces().resolve("requests.jsonl"))) {
      JsonNode r = JSON.readTree(line);
      ObjectNode doc = JSON.createObjectNode();
      ObjectNode rs = doc.putArray("resourceSpans").addObject();
      ArrayNode attrs = rs.putObject("resource").putArray("attributes");
      attr(attrs, "service.name", "engine");
      attr(attrs, "host.name", "vm");
      attr(attrs, "llmlat.layer", "engine");
      ObjectNode span = rs.putArray("scopeSpans").addObject().putArray("spans").addObject();
      span.put("traceId", r.get("trace_id").asText());
      span.put("spanId", r.get("trace_id").asText().substring(0, 16));
      span.put("parentSpanId", r.get("parent_span_id").asText());
      span.put("name", "llm_request");
      span.put("kind", 2);
      span.put("startTimeUnixNano", r.get("arrival_ns").asText());
      span.put("endTimeUnixNano", r.get("finish_ns").asText());
      ObjectNode tokens = span.putArray("attributes").addObject();
      tokens.put("key", "gen_ai.usage.input_tokens");
      tokens.putObject("value").put("intValue", r.get("prompt_len").asText());
      ObjectNode event = span.putArray("events").addObject();
      event.put("name", "llmlat.first_token");
      event.put("timeUnixNano", r.get("first_token_ns").asText());
      lines.append(JSON.writeValueAsString(doc)).append('\n');
    }
    Path file = scratch.resolve("engine.otlp.jsonl");
    Files.writeString(file, lines);
    return file;
  }

  private static void attr(ArrayNode attrs, String key, String value) {
    ObjectNode a = attrs.addObject();
    a.put("key", key);
    a.putObject("value").put("stringValue", value);
  }
}
