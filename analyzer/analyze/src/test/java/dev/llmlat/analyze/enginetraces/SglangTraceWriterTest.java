package dev.llmlat.analyze.enginetraces;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.otlpjson.OtlpJsonReader;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SglangTraceWriterTest {
  private static final long T0 = 1_760_000_000_000_000_000L;
  private static final long MS = 1_000_000L;
  private static final HexFormat HEX = HexFormat.of();

  /** Unified, traceparent from the gateway, one prefill chunk, five tokens. */
  private static final RequestTruth PLAIN =
      new RequestTruth(
          "4bf92f3577b34da6a3ce929d0e0e4736",
          "00f067aa0ba902b7",
          "9c2e1f0a7b3d4e5f8a6b7c8d9e0f1a2b",
          "Qwen/Qwen3-8B",
          512,
          5,
          T0,
          T0 + 3 * MS,
          T0 + 10 * MS,
          List.of(new RequestTruth.Chunk(T0 + 10 * MS, T0 + 40 * MS, 512)),
          T0 + 40 * MS,
          new long[] {T0 + 40 * MS, T0 + 50 * MS, T0 + 60 * MS, T0 + 70 * MS, T0 + 80 * MS},
          T0 + 82 * MS,
          "stop",
          0);

  /** Unified, no traceparent, three prefill chunks, three tokens. */
  private static final RequestTruth CHUNKED =
      new RequestTruth(
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          "",
          "req_7f00aa11bb22cc33",
          "Qwen/Qwen3-8B",
          20_000,
          3,
          T0 + 5 * MS,
          T0 + 9 * MS,
          T0 + 30 * MS,
          List.of(
              new RequestTruth.Chunk(T0 + 30 * MS, T0 + 90 * MS, 8192),
              new RequestTruth.Chunk(T0 + 95 * MS, T0 + 150 * MS, 8192),
              new RequestTruth.Chunk(T0 + 152 * MS, T0 + 190 * MS, 3616)),
          T0 + 191 * MS,
          new long[] {T0 + 191 * MS, T0 + 205 * MS, T0 + 220 * MS},
          T0 + 221 * MS,
          "length",
          0);

  /** The decode server of a PD pair: 7 ms KV transfer before scheduling. */
  private static final RequestTruth DISAGG =
      new RequestTruth(
          "0af7651916cd43dd8448eb211c80319c",
          "b7ad6b7169203331",
          "d00d00d00d00d00d00d00d00d00d00d0",
          "Qwen/Qwen3-8B",
          1000,
          2,
          T0 + 100 * MS,
          T0 + 101 * MS,
          T0 + 120 * MS,
          List.of(new RequestTruth.Chunk(T0 + 120 * MS, T0 + 121 * MS, 1)),
          T0 + 121 * MS,
          new long[] {T0 + 121 * MS, T0 + 135 * MS},
          T0 + 136 * MS,
          "stop",
          7 * MS);

  @Test
  void writesSglangSpansThatParseAndMatchTheTruth(@TempDir Path dir) throws Exception {
    List<String> lines = new SglangTraceWriter().write(List.of(PLAIN, CHUNKED, DISAGG), "sglang-0");
    assertThat(lines).isNotEmpty();

    ObjectMapper json = new ObjectMapper();
    for (String line : lines) {
      assertThat(line).doesNotContain("\n").doesNotContain("llmlat");
      JsonNode doc = json.readTree(line);
      JsonNode rs = doc.get("resourceSpans").get(0);
      assertThat(rs.get("scopeSpans").get(0).get("scope").get("name").asText())
          .isEqualTo("sglang server");
    }

    Path file = dir.resolve("sglang.jsonl");
    Files.write(file, lines);
    List<Span> spans = new ArrayList<>();
    new OtlpJsonReader(file)
        .readRequests(
            req -> {
              for (ResourceSpans rs : req.getResourceSpansList()) {
                assertThat(attrs(rs.getResource().getAttributesList()))
                    .containsEntry("service.name", "sglang")
                    .containsEntry("telemetry.sdk.language", "python");
                for (ScopeSpans ss : rs.getScopeSpansList()) {
                  assertThat(ss.getScope().getName()).isEqualTo("sglang server");
                  spans.addAll(ss.getSpansList());
                }
              }
            });
    assertThat(spans)
        .allSatisfy(
            s -> {
              assertThat(s.getKind()).isEqualTo(Span.SpanKind.SPAN_KIND_INTERNAL);
              assertThat(s.getEndTimeUnixNano()).isGreaterThanOrEqualTo(s.getStartTimeUnixNano());
              assertThat(s.getAttributesList()).noneMatch(kv -> kv.getKey().startsWith("llmlat"));
            });
    Map<String, List<Span>> byTrace =
        spans.stream().collect(Collectors.groupingBy(s -> hex(s.getTraceId().toByteArray())));

    checkPlain(byTrace.get(PLAIN.traceId()));
    String chunkedTrace =
        byTrace.keySet().stream()
            .filter(t -> t.startsWith("0000000000000000"))
            .findFirst()
            .orElseThrow();
    checkChunked(byTrace.get(chunkedTrace));
    checkDisagg(byTrace.get(DISAGG.traceId()));
  }

  private static void checkPlain(List<Span> t) {
    Span root = one(t, " Req 9c2e1f0a");
    assertThat(hex(root.getParentSpanId().toByteArray())).isEqualTo(PLAIN.parentSpanId());
    assertThat(root.getFlags()).isEqualTo(0x300);
    assertThat(root.getStartTimeUnixNano()).isEqualTo(PLAIN.receivedNs());
    assertThat(root.getEndTimeUnixNano()).isEqualTo(PLAIN.finishNs());
    Map<String, Object> ra = attrs(root.getAttributesList());
    assertThat(ra)
        .containsEntry("rid", PLAIN.requestId())
        .containsEntry("module", "sglang::request")
        .containsEntry("gen_ai.response.model", "Qwen/Qwen3-8B")
        .containsEntry("gen_ai.usage.prompt_tokens", 512L)
        .containsEntry("gen_ai.usage.completion_tokens", 5L)
        .containsEntry("gen_ai.response.finish_reasons", "[\"stop\"]")
        .containsEntry("gen_ai.latency.time_to_first_token", 0.04)
        .doesNotContainKey("gen_ai.latency.e2e");
    assertParentage(t, root);

    Span tokThread =
        t.stream()
            .filter(s -> s.getName().startsWith("Tokenizer (host:"))
            .findFirst()
            .orElseThrow();
    assertThat(tokThread.getParentSpanId()).isEqualTo(root.getSpanId());
    assertThat(one(t, "tokenize").getStartTimeUnixNano()).isEqualTo(PLAIN.receivedNs());
    Span sched =
        t.stream()
            .filter(s -> s.getName().startsWith("Scheduler [TP 0]  [PP 0] (host:"))
            .findFirst()
            .orElseThrow();
    assertThat(sched.getParentSpanId()).isEqualTo(root.getSpanId());
    assertThat(sched.getFlags()).isEqualTo(0x300);
    Span rp = one(t, "request_process");
    assertThat(rp.getStartTimeUnixNano()).isEqualTo(PLAIN.arrivalNs());
    assertThat(rp.getLinks(0).getSpanId()).isEqualTo(one(t, "api_server_dispatch").getSpanId());
    assertThat(one(t, "prefill_waiting").getEndTimeUnixNano()).isEqualTo(PLAIN.scheduledNs());
    Span pf = one(t, "prefill_forward");
    assertThat(pf.getStartTimeUnixNano()).isEqualTo(PLAIN.scheduledNs());
    assertThat(pf.getEndTimeUnixNano()).isEqualTo(PLAIN.prefillChunks().get(0).endNs());
    assertThat(all(t, "chunked_prefill")).isEmpty();
    Span df = one(t, "decode_forward");
    assertThat(df.getStartTimeUnixNano()).isEqualTo(PLAIN.prefillEndNs());
    assertThat(df.getEndTimeUnixNano()).isEqualTo(PLAIN.tokenNs()[4]);
    List<Span> loops = all(t, "decode_loop");
    assertThat(loops).hasSize(4);
    for (int k = 0; k < 4; k++) {
      Span l = loops.get(k);
      assertThat(l.getParentSpanId()).isEqualTo(df.getSpanId());
      assertThat(attrs(l.getAttributesList())).containsEntry("decode_ct", (long) k);
      assertThat(l.getEndTimeUnixNano()).isEqualTo(PLAIN.tokenNs()[k + 1]);
      assertThat(l.getStartTimeUnixNano())
          .isEqualTo(k == 0 ? PLAIN.prefillEndNs() : PLAIN.tokenNs()[k]);
    }
  }

  private static void checkChunked(List<Span> t) {
    Span root = one(t, " Req 7f00aa11");
    assertThat(root.getParentSpanId().isEmpty()).isTrue();
    assertThat(attrs(root.getAttributesList()))
        .containsEntry("rid", "7f00aa11bb22cc33")
        .containsEntry("gen_ai.request.id", CHUNKED.requestId());
    assertParentage(t, root);
    Span pf = one(t, "prefill_forward");
    assertThat(pf.getStartTimeUnixNano()).isEqualTo(CHUNKED.scheduledNs());
    assertThat(pf.getEndTimeUnixNano()).isEqualTo(CHUNKED.prefillEndNs());
    List<Span> chunks = all(t, "chunked_prefill");
    assertThat(chunks).hasSize(3);
    long from = CHUNKED.scheduledNs();
    for (int k = 0; k < 3; k++) {
      assertThat(chunks.get(k).getParentSpanId()).isEqualTo(pf.getSpanId());
      assertThat(chunks.get(k).getStartTimeUnixNano()).isEqualTo(from);
      assertThat(chunks.get(k).getEndTimeUnixNano())
          .isEqualTo(CHUNKED.prefillChunks().get(k).endNs());
      from = CHUNKED.prefillChunks().get(k).endNs();
    }
    assertThat(all(t, "decode_loop")).hasSize(2);
  }

  private static void checkDisagg(List<Span> t) {
    Span root = one(t, "decode Req d00d00d0");
    assertThat(attrs(root.getAttributesList()).get("bootstrap_room").toString()).startsWith("0x");
    assertParentage(t, root);
    assertThat(t).anyMatch(s -> s.getName().startsWith("Decode Scheduler [TP 0]  [PP 0] (host:"));
    assertThat(all(t, "request_process")).isEmpty();
    Span tr = one(t, "decode_transferred");
    assertThat(tr.getEndTimeUnixNano() - tr.getStartTimeUnixNano())
        .isEqualTo(DISAGG.kvTransferNs());
    assertThat(one(t, "decode_prepare").getStartTimeUnixNano()).isEqualTo(DISAGG.arrivalNs());
    assertThat(one(t, "decode_waiting").getEndTimeUnixNano()).isEqualTo(DISAGG.scheduledNs());
    Span df = one(t, "decode_forward");
    Span fake = one(t, "fake_output");
    assertThat(fake.getParentSpanId()).isEqualTo(df.getSpanId());
    assertThat(fake.getStartTimeUnixNano()).isEqualTo(DISAGG.scheduledNs());
    assertThat(fake.getEndTimeUnixNano()).isEqualTo(DISAGG.prefillEndNs());
    assertThat(one(t, "decode_loop").getEndTimeUnixNano()).isEqualTo(DISAGG.tokenNs()[1]);
  }

  /**
   * Every span but the root has its parent in the trace; the root's parent is the gateway's or
   * none.
   */
  private static void assertParentage(List<Span> t, Span root) {
    var ids = t.stream().map(Span::getSpanId).collect(Collectors.toSet());
    assertThat(ids).hasSize(t.size());
    assertThat(t)
        .filteredOn(s -> s != root)
        .allSatisfy(s -> assertThat(ids).contains(s.getParentSpanId()));
  }

  private static Span one(List<Span> t, String name) {
    List<Span> found = all(t, name);
    assertThat(found).as(name).hasSize(1);
    return found.get(0);
  }

  private static List<Span> all(List<Span> t, String name) {
    return t.stream()
        .filter(s -> s.getName().equals(name))
        .sorted(Comparator.comparingLong(Span::getStartTimeUnixNano))
        .toList();
  }

  private static Map<String, Object> attrs(List<KeyValue> kvs) {
    return kvs.stream()
        .collect(
            Collectors.toMap(
                KeyValue::getKey,
                kv ->
                    switch (kv.getValue().getValueCase()) {
                      case STRING_VALUE -> kv.getValue().getStringValue();
                      case INT_VALUE -> kv.getValue().getIntValue();
                      case DOUBLE_VALUE -> kv.getValue().getDoubleValue();
                      case BOOL_VALUE -> kv.getValue().getBoolValue();
                      default -> kv.getValue().toString();
                    }));
  }

  private static String hex(byte[] b) {
    return HEX.formatHex(b);
  }
}
