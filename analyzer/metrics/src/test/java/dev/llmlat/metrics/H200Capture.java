package dev.llmlat.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.gpu.ExportFormat;
import dev.llmlat.gpu.GpuImporter;
import dev.llmlat.gpu.ImportOptions;
import dev.llmlat.ingest.imports.StoreImportTarget;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import dev.llmlat.sharedtraces.SharedTraces;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The real H200 capture of ../shared/traces/h200-e2e in a store, through the product's import
 * paths: the agent's gateway spans and the Nsight export as they are, the engine's requests.jsonl
 * as OTLP/JSON request spans (arrival to finish, the first token an event, as the report module's
 * H200 tests import it) with a decode span whose token times are the ends of the decode steps that
 * served the request (cuda_events.jsonl: one token per request a step served).
 */
final class H200Capture {
  private static final ObjectMapper JSON = new ObjectMapper();

  private H200Capture() {}

  static Path traces() {
    return SharedTraces.resolve("h200-e2e");
  }

  /** Migrates {@code store} and imports the three layers. */
  static void importInto(EmbeddedClickHouse store, Path scratch) throws IOException {
    SchemaMigrator.bundled().migrate(store);
    importFile(
        store,
        traces().resolve("gateway.otlp.jsonl"),
        ExportFormat.OTLP_JSON,
        ImportOptions.defaults());
    importFile(store, engineRequests(scratch), ExportFormat.OTLP_JSON, ImportOptions.defaults());
    importFile(
        store,
        traces().resolve("engine.sqlite"),
        ExportFormat.NSYS_SQLITE,
        ImportOptions.defaults().withServiceName("engine").withHostName("vm"));
  }

  private static void importFile(
      EmbeddedClickHouse store, Path file, ExportFormat format, ImportOptions options)
      throws IOException {
    try (StoreImportTarget target = new StoreImportTarget(store)) {
      assertThat(GpuImporter.importFile(file, format, options, target).spans())
          .as(file.toString())
          .isPositive();
      target.commit();
    }
  }

  /**
   * The host times the decode steps serving {@code traceId} ended, in order (its second token
   * onwards).
   */
  static List<Long> decodeEnds(String traceId) throws IOException {
    List<Long> ends = new ArrayList<>();
    for (String line : Files.readAllLines(traces().resolve("cuda_events.jsonl"))) {
      JsonNode step = JSON.readTree(line);
      boolean serves = false;
      for (JsonNode t : step.get("trace_ids")) {
        serves |= t.asText().equals(traceId);
      }
      if (serves && step.get("kind").asText().equals(LlmlatSpanNames.DECODE)) {
        ends.add(step.get("host_done_unix_ns").asLong());
      }
    }
    return ends;
  }

  /** requests.jsonl, one object per request. */
  static List<JsonNode> requests() throws IOException {
    List<JsonNode> requests = new ArrayList<>();
    for (String line : Files.readAllLines(traces().resolve("requests.jsonl"))) {
      requests.add(JSON.readTree(line));
    }
    return requests;
  }

  private static Path engineRequests(Path scratch) throws IOException {
    StringBuilder out = new StringBuilder();
    for (JsonNode request : requests()) {
      String traceId = request.get("trace_id").asText();
      ObjectNode export = JSON.createObjectNode();
      ObjectNode resourceSpans = export.putArray("resourceSpans").addObject();
      ArrayNode resource = resourceSpans.putObject("resource").putArray("attributes");
      string(resource, "service.name", "engine");
      string(resource, LlmlatAttributes.HOST_NAME, "vm");
      string(resource, LlmlatAttributes.LAYER, LlmlatAttributes.LAYER_ENGINE);
      ArrayNode spans = resourceSpans.putArray("scopeSpans").addObject().putArray("spans");
      String requestSpan = traceId.substring(8, 24);
      ObjectNode span =
          span(
              spans,
              traceId,
              requestSpan,
              request.get("parent_span_id").asText(),
              LlmlatSpanNames.REQUEST,
              2,
              request.get("arrival_ns").asLong(),
              request.get("finish_ns").asLong());
      ObjectNode prompt = span.putArray("attributes").addObject();
      prompt.put("key", "gen_ai.usage.input_tokens");
      prompt.putObject("value").put("intValue", request.get("prompt_len").asText());
      ObjectNode firstToken = span.putArray("events").addObject();
      firstToken.put("name", LlmlatAttributes.EVENT_FIRST_TOKEN);
      firstToken.put("timeUnixNano", request.get("first_token_ns").asText());
      long previous = request.get("first_token_ns").asLong();
      ObjectNode decode =
          span(
              spans,
              traceId,
              traceId.substring(16),
              requestSpan,
              LlmlatSpanNames.DECODE,
              1,
              previous,
              request.get("finish_ns").asLong());
      ArrayNode deltas =
          decode
              .putArray("attributes")
              .addObject()
              .put("key", LlmlatAttributes.DECODE_TOKEN_DELTAS_NS)
              .putObject("value")
              .putObject("arrayValue")
              .putArray("values");
      for (long end : decodeEnds(traceId)) {
        deltas.addObject().put("intValue", Long.toString(end - previous));
        previous = end;
      }
      out.append(JSON.writeValueAsString(export)).append('\n');
    }
    Path file = scratch.resolve("engine-requests.otlp.jsonl");
    Files.writeString(file, out);
    return file;
  }

  private static ObjectNode span(
      ArrayNode spans,
      String traceId,
      String spanId,
      String parent,
      String name,
      int kind,
      long startNs,
      long endNs) {
    ObjectNode span = spans.addObject();
    span.put("traceId", traceId);
    span.put("spanId", spanId);
    span.put("parentSpanId", parent);
    span.put("name", name);
    span.put("kind", kind);
    span.put("startTimeUnixNano", Long.toString(startNs));
    span.put("endTimeUnixNano", Long.toString(endNs));
    return span;
  }

  private static void string(ArrayNode attributes, String key, String value) {
    ObjectNode a = attributes.addObject();
    a.put("key", key);
    a.putObject("value").put("stringValue", value);
  }
}
