package dev.llmlat.analyze.enginetraces;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.otlpjson.OtlpJsonReader;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VllmTraceWriterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long T0 = 1_760_000_000_123_456_789L;

  /** Two chunked-prefill passes, four tokens. */
  private static RequestTruth chunked() {
    long received = T0;
    long arrival = received + 6_000_000; // templating + tokenization
    long scheduled = arrival + 15_000_000;
    long mid = scheduled + 20_000_000;
    long first = mid + 21_000_000;
    long[] tokens = {first, first + 20_000_000, first + 40_000_000, first + 60_000_000};
    return new RequestTruth(
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
        "chatcmpl-a1",
        "llama-3-8b",
        4096,
        tokens.length,
        received,
        arrival,
        scheduled,
        List.of(
            new RequestTruth.Chunk(scheduled + 300_000, mid, 2048),
            new RequestTruth.Chunk(mid + 300_000, first - 800_000, 2048)),
        first,
        tokens,
        tokens[tokens.length - 1] + 700_000,
        "stop",
        0);
  }

  /** Disaggregated decode side: KVs pulled before scheduling, one-token prefill. */
  private static RequestTruth withKvTransfer() {
    long received = T0 + 5_000_000;
    long arrival = received + 3_000_000;
    long scheduled = arrival + 30_000_000;
    long first = scheduled + 10_000_000;
    long[] tokens = {first, first + 25_000_000, first + 50_000_000};
    return new RequestTruth(
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "00f067aa0ba902b7",
        "chatcmpl-b2",
        "llama-3-8b",
        2048,
        tokens.length,
        received,
        arrival,
        scheduled,
        List.of(new RequestTruth.Chunk(scheduled + 500_000, first - 300_000, 1)),
        first,
        tokens,
        tokens[tokens.length - 1] + 400_000,
        "length",
        22_000_000);
  }

  @Test
  void latestReleaseWritesOneLlmRequestServerSpanPerRequestWithTheTruthsLatencies(@TempDir Path dir)
      throws Exception {
    RequestTruth a = chunked();
    RequestTruth b = withKvTransfer();
    VllmTraceWriter writer = VllmTraceWriter.v1();
    assertThat(writer.engine()).isEqualTo("vllm");
    List<String> docs = writer.write(List.of(a, b), "vllm-0");
    assertThat(docs).hasSize(1);
    assertThat(docs.get(0))
        .doesNotContain("llmlat.")
        .doesNotContain("host.name")
        .doesNotContain("\n");

    JsonNode rs = JSON.readTree(docs.get(0)).path("resourceSpans").get(0);
    Map<String, Object> res = attrs(rs.path("resource").path("attributes"));
    assertThat(res)
        .containsEntry("service.name", "unknown_service")
        .containsEntry("telemetry.sdk.language", "python")
        .containsEntry("vllm.instrumenting_module_name", "vllm.llm_engine")
        .containsKey("vllm.process_id");
    assertThat(
            attrs(
                    JSON.readTree(writer.write(List.of(a), "vllm-1").get(0))
                        .path("resourceSpans")
                        .get(0)
                        .path("resource")
                        .path("attributes"))
                .get("vllm.process_id"))
        .isNotEqualTo(res.get("vllm.process_id"));
    JsonNode ss = rs.path("scopeSpans").get(0);
    assertThat(ss.path("scope").path("name").asText()).isEqualTo("vllm.tracing.otel");
    assertThat(ss.path("spans")).hasSize(2);

    Map<String, JsonNode> byTrace = new HashMap<>();
    ss.path("spans").forEach(s -> byTrace.put(s.path("traceId").asText(), s));
    for (RequestTruth r : List.of(a, b)) {
      JsonNode s = byTrace.get(r.traceId());
      assertThat(s.path("name").asText()).isEqualTo("llm_request");
      assertThat(s.path("kind").asInt()).isEqualTo(2);
      assertThat(s.path("parentSpanId").asText()).isEqualTo(r.parentSpanId());
      assertThat(s.path("spanId").asText()).matches("[0-9a-f]{16}");
      // From v0.17 arrival_time is stamped before templating and tokenization: at receipt.
      long start = Long.parseLong(s.path("startTimeUnixNano").asText());
      assertThat(Math.abs(start - r.receivedNs())).isLessThan(1_000);
      assertThat(Long.parseLong(s.path("endTimeUnixNano").asText())).isEqualTo(r.finishNs());

      Map<String, Object> at = attrs(s.path("attributes"));
      long last = r.tokenNs()[r.tokenNs().length - 1];
      assertThat((double) at.get("gen_ai.latency.time_to_first_token"))
          .isEqualTo((r.firstTokenNs() - r.receivedNs()) / 1e9);
      assertThat((double) at.get("gen_ai.latency.time_in_queue"))
          .isEqualTo((r.scheduledNs() - r.arrivalNs()) / 1e9);
      assertThat((double) at.get("gen_ai.latency.time_in_model_prefill"))
          .isEqualTo((r.firstTokenNs() - r.scheduledNs()) / 1e9);
      assertThat((double) at.get("gen_ai.latency.time_in_model_decode"))
          .isEqualTo((last - r.firstTokenNs()) / 1e9);
      assertThat((double) at.get("gen_ai.latency.time_in_model_inference"))
          .isEqualTo((last - r.scheduledNs()) / 1e9);
      assertThat((double) at.get("gen_ai.latency.e2e")).isEqualTo((last - r.receivedNs()) / 1e9);
      assertThat(at.get("gen_ai.usage.prompt_tokens")).isEqualTo((long) r.promptTokens());
      assertThat(at.get("gen_ai.usage.completion_tokens")).isEqualTo((long) r.outputTokens());
      assertThat(at.get("gen_ai.request.id")).isEqualTo(r.requestId());
      assertThat(at)
          .doesNotContainKeys(
              "gen_ai.response.model",
              "gen_ai.request.model",
              "gen_ai.response.finish_reasons",
              "gen_ai.latency.time_in_scheduler");
    }

    // The same document through the project's OTLP/JSON reader.
    List<Span> read = read(dir, docs, new ArrayList<>());
    assertThat(read).hasSize(2);
    for (Span s : read) {
      assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
      assertThat(s.getParentSpanId().size()).isEqualTo(8);
      RequestTruth r =
          HexFormat.of().formatHex(s.getTraceId().toByteArray()).equals(a.traceId()) ? a : b;
      Map<String, AnyValue> pa = protoAttrs(s);
      assertThat(pa.get("gen_ai.latency.time_in_queue").getDoubleValue())
          .isEqualTo(r.queueNs() / 1e9);
      assertThat(pa.get("gen_ai.usage.prompt_tokens").getIntValue()).isEqualTo(r.promptTokens());
      assertThat(pa.get("gen_ai.request.id").getStringValue()).isEqualTo(r.requestId());
    }
  }

  @Test
  void releasesBeforeV017StartAtThePostTokenizationArrivalAndV0_11HasTheEngineScope()
      throws Exception {
    RequestTruth a = chunked();
    for (VllmTraceWriter.Release rel :
        List.of(VllmTraceWriter.Release.V0_11, VllmTraceWriter.Release.V0_16)) {
      JsonNode rs =
          JSON.readTree(VllmTraceWriter.v1(rel).write(List.of(a), "vllm-0").get(0))
              .path("resourceSpans")
              .get(0);
      JsonNode s = rs.path("scopeSpans").get(0).path("spans").get(0);
      assertThat(Math.abs(Long.parseLong(s.path("startTimeUnixNano").asText()) - a.arrivalNs()))
          .isLessThan(1_000);
      assertThat((double) attrs(s.path("attributes")).get("gen_ai.latency.time_to_first_token"))
          .isEqualTo((a.firstTokenNs() - a.arrivalNs()) / 1e9);
      Map<String, Object> res = attrs(rs.path("resource").path("attributes"));
      String scope = rs.path("scopeSpans").get(0).path("scope").path("name").asText();
      if (rel == VllmTraceWriter.Release.V0_11) {
        assertThat(scope).isEqualTo("vllm.llm_engine");
        assertThat(res).doesNotContainKeys("vllm.process_id", "vllm.instrumenting_module_name");
      } else {
        assertThat(scope).isEqualTo("vllm.tracing.otel");
        assertThat(res).containsKey("vllm.process_id");
      }
    }
  }

  @Test
  void phaseSpansComeFromTheEngineCoreAsSiblingsOfLlmRequest(@TempDir Path dir) throws Exception {
    RequestTruth a = chunked();
    RequestTruth b = withKvTransfer();
    List<String> docs = VllmTraceWriter.withPhaseSpans().write(List.of(a, b), "vllm-0");
    assertThat(docs).hasSize(2);
    List<ResourceSpans> resources = new ArrayList<>();
    List<Span> read = read(dir, docs, resources);
    assertThat(resources).hasSize(2);
    Map<String, String> core = new HashMap<>();
    resources
        .get(1)
        .getResource()
        .getAttributesList()
        .forEach(kv -> core.put(kv.getKey(), kv.getValue().getStringValue()));
    assertThat(core)
        .containsEntry("vllm.process_kind", "engine_core")
        .containsEntry("vllm.process_name", "EngineCore");

    Map<String, List<Span>> byName = new HashMap<>();
    for (Span s : read) {
      byName.computeIfAbsent(s.getName(), k -> new ArrayList<>()).add(s);
    }
    assertThat(byName.get("llm_request")).hasSize(2);
    assertThat(byName.get("vllm_queue")).hasSize(2);
    assertThat(byName.get("vllm_prefill")).hasSize(1); // b's KVs came from the prefill side
    assertThat(byName.get("vllm_async_kv_transfer")).hasSize(1);
    assertThat(byName.get("vllm_decode")).hasSize(2);
    // a: 2 chunks + 3 decode steps; b: 1 chunk + 2 decode steps
    assertThat(byName.get("vllm_step_execution")).hasSize(8);

    for (Span s : read) {
      RequestTruth r =
          HexFormat.of().formatHex(s.getTraceId().toByteArray()).equals(a.traceId()) ? a : b;
      assertThat(HexFormat.of().formatHex(s.getParentSpanId().toByteArray()))
          .isEqualTo(r.parentSpanId());
      if (s.getName().equals("llm_request")) {
        continue;
      }
      assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_INTERNAL);
      assertThat(protoAttrs(s).get("request_id").getStringValue())
          .matches(r.requestId() + "-[0-9a-f]{8}");
      long start = s.getStartTimeUnixNano();
      long end = s.getEndTimeUnixNano();
      long last = r.tokenNs()[r.tokenNs().length - 1];
      switch (s.getName()) {
        case "vllm_queue" -> {
          assertThat(Math.abs(start - r.receivedNs())).isLessThan(1_000);
          assertThat(end).isEqualTo(r.scheduledNs());
        }
        case "vllm_async_kv_transfer" -> assertThat(end - start).isEqualTo(r.kvTransferNs());
        case "vllm_prefill" ->
            assertThat(end - start).isEqualTo(r.firstTokenNs() - r.scheduledNs());
        case "vllm_decode" -> {
          assertThat(end).isEqualTo(last);
          assertThat(start).isEqualTo(r.kvTransferNs() > 0 ? r.scheduledNs() : r.firstTokenNs());
        }
        default ->
            assertThat(protoAttrs(s).get("phase").getStringValue()).isIn("prefill", "decode");
      }
    }
    Span firstStepOfA =
        byName.get("vllm_step_execution").stream()
            .filter(s -> s.getStartTimeUnixNano() == a.prefillChunks().get(0).startNs())
            .findFirst()
            .orElseThrow();
    assertThat(protoAttrs(firstStepOfA).get("phase").getStringValue()).isEqualTo("prefill");
    assertThat(protoAttrs(firstStepOfA).get("total_scheduled_tokens").getIntValue())
        .isEqualTo(2048);
  }

  private static List<Span> read(Path dir, List<String> docs, List<ResourceSpans> resources)
      throws Exception {
    Path file = dir.resolve("vllm.jsonl");
    Files.write(file, docs);
    List<Span> read = new ArrayList<>();
    long n =
        new OtlpJsonReader(file)
            .readRequests(
                req ->
                    req.getResourceSpansList()
                        .forEach(
                            r -> {
                              resources.add(r);
                              r.getScopeSpansList().forEach(s -> read.addAll(s.getSpansList()));
                            }));
    assertThat(n).isEqualTo(docs.size());
    return read;
  }

  private static Map<String, AnyValue> protoAttrs(Span s) {
    Map<String, AnyValue> m = new HashMap<>();
    for (KeyValue kv : s.getAttributesList()) {
      m.put(kv.getKey(), kv.getValue());
    }
    return m;
  }

  /** key -> String, Long (intValue), Double (doubleValue). */
  private static Map<String, Object> attrs(JsonNode list) {
    Map<String, Object> m = new HashMap<>();
    for (JsonNode kv : list) {
      JsonNode v = kv.path("value");
      Object o;
      if (v.has("stringValue")) {
        o = v.path("stringValue").asText();
      } else if (v.has("intValue")) {
        o = Long.parseLong(v.path("intValue").asText());
      } else if (v.has("doubleValue")) {
        o = v.path("doubleValue").asDouble();
      } else {
        o = v.toString();
      }
      m.put(kv.path("key").asText(), o);
    }
    return m;
  }
}
