package dev.llmlat.analyze.enginetraces;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.otlpjson.OtlpJsonReader;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TensorRtLlmTraceWriterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long T0 = 1_760_000_000_123_456_789L;

  private static RequestTruth plain() {
    long arrival = T0 + 2_000_000;
    long scheduled = arrival + 15_000_000;
    long first = scheduled + 40_000_000;
    long[] tokens = {first, first + 20_000_000, first + 40_000_000, first + 60_000_000};
    return new RequestTruth(
        "0af7651916cd43dd8448eb211c80319c",
        "b7ad6b7169203331",
        "req-a",
        "llama-3-8b",
        512,
        tokens.length,
        T0,
        arrival,
        scheduled,
        List.of(new RequestTruth.Chunk(scheduled + 1_000_000, first - 500_000, 512)),
        first,
        tokens,
        tokens[tokens.length - 1] + 700_000,
        "stop",
        0);
  }

  private static RequestTruth withKvTransfer() {
    long received = T0 + 5_000_000;
    long arrival = received + 3_000_000;
    long scheduled = arrival + 30_000_000;
    long first = scheduled + 10_000_000;
    long[] tokens = {first, first + 25_000_000, first + 50_000_000};
    return new RequestTruth(
        "4bf92f3577b34da6a3ce929d0e0e4736",
        "00f067aa0ba902b7",
        "req-b",
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
  void writesOneLlmRequestServerSpanPerRequestWithTheTruthsLatencies(@TempDir Path dir)
      throws Exception {
    RequestTruth a = plain();
    RequestTruth b = withKvTransfer();
    TensorRtLlmTraceWriter writer = new TensorRtLlmTraceWriter();
    assertThat(writer.engine()).isEqualTo("tensorrt-llm");
    List<String> docs = writer.write(List.of(a, b), "trtllm-0");
    assertThat(docs).hasSize(1);
    assertThat(docs.get(0)).doesNotContain("llmlat.").doesNotContain("host.name");

    JsonNode rs = JSON.readTree(docs.get(0)).path("resourceSpans").get(0);
    assertThat(attrs(rs.path("resource").path("attributes")))
        .containsEntry("service.name", "unknown_service")
        .containsEntry("telemetry.sdk.language", "python")
        .doesNotContainKey("host.name");
    JsonNode ss = rs.path("scopeSpans").get(0);
    assertThat(ss.path("scope").path("name").asText()).isEqualTo("trt.llm");
    JsonNode spans = ss.path("spans");
    assertThat(spans).hasSize(2);

    Map<String, JsonNode> byTrace = new HashMap<>();
    spans.forEach(s -> byTrace.put(s.path("traceId").asText(), s));
    for (RequestTruth r : List.of(a, b)) {
      JsonNode s = byTrace.get(r.traceId());
      assertThat(s.path("name").asText()).isEqualTo("llm_request");
      assertThat(s.path("kind").asInt()).isEqualTo(2);
      assertThat(s.path("parentSpanId").asText()).isEqualTo(r.parentSpanId());
      assertThat(s.path("spanId").asText()).matches("[0-9a-f]{16}");
      assertThat(Math.abs(Long.parseLong(s.path("startTimeUnixNano").asText()) - r.arrivalNs()))
          .isLessThan(1_000);
      assertThat(Long.parseLong(s.path("endTimeUnixNano").asText())).isEqualTo(r.finishNs());

      Map<String, Object> at = attrs(s.path("attributes"));
      assertThat((double) at.get("gen_ai.latency.time_to_first_token"))
          .isEqualTo((r.firstTokenNs() - r.arrivalNs()) / 1e9);
      assertThat((double) at.get("gen_ai.latency.time_in_queue")).isEqualTo(r.queueNs() / 1e9);
      assertThat((double) at.get("gen_ai.latency.e2e"))
          .isEqualTo((r.tokenNs()[r.tokenNs().length - 1] - r.arrivalNs()) / 1e9);
      assertThat((double) at.get("gen_ai.latency.kv_cache_transfer_time"))
          .isEqualTo(r.kvTransferNs() / 1e9);
      assertThat(at.get("gen_ai.usage.prompt_tokens")).isEqualTo((long) r.promptTokens());
      assertThat(at.get("gen_ai.usage.completion_tokens")).isEqualTo((long) r.outputTokens());
      assertThat(at.get("gen_ai.response.finish_reasons"))
          .isEqualTo("[\"" + r.finishReason() + "\"]");
      assertThat(at).doesNotContainKeys("gen_ai.request.model", "gen_ai.response.model");
    }
    assertThat(byTrace.get(a.traceId()).has("events")).isFalse();
    JsonNode events = byTrace.get(b.traceId()).path("events");
    assertThat(events).hasSize(2);
    assertThat(events.get(0).path("name").asText()).isEqualTo("kv_cache_transfer_start");
    assertThat(events.get(1).path("name").asText()).isEqualTo("kv_cache_transfer_end");
    long kvStart = Long.parseLong(events.get(0).path("timeUnixNano").asText());
    long kvEnd = Long.parseLong(events.get(1).path("timeUnixNano").asText());
    assertThat(kvStart).isBetween(b.arrivalNs() - 1_000, b.scheduledNs());
    assertThat(Math.abs(kvEnd - kvStart - b.kvTransferNs())).isLessThan(1_000);

    // The same document through the project's OTLP/JSON reader (hex ids, int64 strings, int kinds).
    Path file = dir.resolve("tensorrt-llm.jsonl");
    Files.write(file, docs);
    List<Span> read = new ArrayList<>();
    String[] scope = new String[1];
    new OtlpJsonReader(file)
        .readRequests(
            req ->
                req.getResourceSpansList()
                    .forEach(
                        r ->
                            r.getScopeSpansList()
                                .forEach(
                                    s -> {
                                      scope[0] = s.getScope().getName();
                                      read.addAll(s.getSpansList());
                                    })));
    assertThat(scope[0]).isEqualTo("trt.llm");
    assertThat(read).hasSize(2);
    for (Span s : read) {
      assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
      assertThat(s.getParentSpanId().size()).isEqualTo(8);
      RequestTruth r =
          java.util.HexFormat.of().formatHex(s.getTraceId().toByteArray()).equals(a.traceId())
              ? a
              : b;
      Map<String, AnyValue> pa = new HashMap<>();
      for (KeyValue kv : s.getAttributesList()) {
        pa.put(kv.getKey(), kv.getValue());
      }
      assertThat(pa.get("gen_ai.latency.time_to_first_token").getDoubleValue())
          .isEqualTo((r.firstTokenNs() - r.arrivalNs()) / 1e9);
      assertThat(pa.get("gen_ai.latency.kv_cache_transfer_time").getDoubleValue())
          .isEqualTo(r.kvTransferNs() / 1e9);
      assertThat(pa.get("gen_ai.request.id").getIntValue()).isGreaterThanOrEqualTo(2);
      assertThat(pa.get("gen_ai.usage.prompt_tokens").getIntValue()).isEqualTo(r.promptTokens());
    }
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
