package dev.llmlat.analyze.enginetraces;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.otlpjson.OtlpJsonReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TgiTraceWriterTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long T0 = 1_760_000_000_000_000_000L;
  private static final long MS = 1_000_000L;

  /** A and B share the first prefill; C joins by a chunked prefill while A and B decode. */
  private static List<RequestTruth> truths() {
    RequestTruth a =
        new RequestTruth(
            "0af7651916cd43dd8448eb211c80319c",
            "b7ad6b7169203331",
            "req-a",
            "llama-3-8b",
            512,
            4,
            T0,
            T0 + 3 * MS,
            T0 + 5 * MS,
            List.of(new RequestTruth.Chunk(T0 + 5 * MS + 50_000, T0 + 40 * MS, 512)),
            T0 + 40 * MS,
            new long[] {T0 + 40 * MS, T0 + 60 * MS, T0 + 80 * MS, T0 + 100 * MS},
            T0 + 100 * MS,
            "length",
            0);
    RequestTruth b =
        new RequestTruth(
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "00f067aa0ba902b7",
            "req-b",
            "llama-3-8b",
            300,
            6,
            T0 + MS,
            T0 + 4 * MS,
            T0 + 5 * MS,
            List.of(new RequestTruth.Chunk(T0 + 5 * MS + 50_000, T0 + 40 * MS, 300)),
            T0 + 40 * MS,
            new long[] {
              T0 + 40 * MS, T0 + 60 * MS, T0 + 80 * MS, T0 + 100 * MS, T0 + 120 * MS, T0 + 140 * MS
            },
            T0 + 140 * MS + 300_000,
            "stop",
            0);
    RequestTruth c =
        new RequestTruth(
            "5b8aa5a2d2c872e8321cf37308d69df2",
            "051581bf3cb55c13",
            "req-c",
            "llama-3-8b",
            6000,
            3,
            T0 + 50 * MS,
            T0 + 52 * MS,
            T0 + 59 * MS + 900_000,
            List.of(
                new RequestTruth.Chunk(T0 + 60 * MS, T0 + 80 * MS, 4000),
                new RequestTruth.Chunk(T0 + 80 * MS, T0 + 100 * MS, 2000)),
            T0 + 100 * MS,
            new long[] {T0 + 100 * MS, T0 + 120 * MS, T0 + 140 * MS},
            T0 + 140 * MS,
            "stop",
            0);
    return List.of(a, b, c);
  }

  @Test
  void durationDebugTextFollowsRust() {
    // Expected strings printed by rustc 1.95 for format!("{:?}", Duration::from_nanos(n)).
    assertThat(TgiTraceWriter.rustDurationDebug(0)).isEqualTo("0ns");
    assertThat(TgiTraceWriter.rustDurationDebug(999)).isEqualTo("999ns");
    assertThat(TgiTraceWriter.rustDurationDebug(1_000)).isEqualTo("1\u00b5s");
    assertThat(TgiTraceWriter.rustDurationDebug(1_500)).isEqualTo("1.5\u00b5s");
    assertThat(TgiTraceWriter.rustDurationDebug(1_000_000)).isEqualTo("1ms");
    assertThat(TgiTraceWriter.rustDurationDebug(12_300_000)).isEqualTo("12.3ms");
    assertThat(TgiTraceWriter.rustDurationDebug(12_345_678)).isEqualTo("12.345678ms");
    assertThat(TgiTraceWriter.rustDurationDebug(999_999_999)).isEqualTo("999.999999ms");
    assertThat(TgiTraceWriter.rustDurationDebug(1_000_000_000)).isEqualTo("1s");
    assertThat(TgiTraceWriter.rustDurationDebug(1_000_000_001)).isEqualTo("1.000000001s");
    assertThat(TgiTraceWriter.rustDurationDebug(61_000_000_001L)).isEqualTo("61.000000001s");
    for (long n :
        new long[] {
          0,
          7,
          999,
          1_000,
          1_001,
          45_600,
          999_999,
          1_000_000,
          12_345_678,
          999_999_999,
          1_000_000_000,
          1_234_000_000,
          3_600_000_000_001L
        }) {
      assertThat(parseRustDuration(TgiTraceWriter.rustDurationDebug(n))).isEqualTo(n);
    }
    assertThat(TgiTraceWriter.rustDurationDiv(95_000_000, 4)).isEqualTo(23_750_000);
    assertThat(TgiTraceWriter.rustDurationDiv(2_000_000_001L, 3)).isEqualTo(666_666_667);
  }

  @Test
  void streamingChatRequestsCarryTheTruthsTimes(@TempDir Path dir) throws Exception {
    List<RequestTruth> truths = truths();
    TgiTraceWriter writer = new TgiTraceWriter();
    assertThat(writer.engine()).isEqualTo("tgi");
    List<String> docs = writer.write(truths, "tgi-0");
    assertThat(docs).isNotEmpty();
    for (String d : docs) {
      assertThat(d).doesNotContain("llmlat.").doesNotContain("\n");
    }

    // The project's OTLP/JSON reader takes every line.
    Path file = dir.resolve("tgi.jsonl");
    Files.writeString(file, String.join("\n", docs) + "\n", StandardCharsets.UTF_8);
    List<io.opentelemetry.proto.trace.v1.Span> proto = new ArrayList<>();
    long n =
        new OtlpJsonReader(file)
            .readRequests(
                req ->
                    req.getResourceSpansList()
                        .forEach(
                            rs ->
                                rs.getScopeSpansList()
                                    .forEach(ss -> proto.addAll(ss.getSpansList()))));
    assertThat(n).isEqualTo(docs.size());

    List<S> spans = spans(docs);
    assertThat(proto).hasSize(spans.size());
    Map<String, S> byId = new HashMap<>();
    for (S s : spans) {
      assertThat(byId.put(s.id(), s)).isNull();
    }

    // Rust spans: one ResourceSpans each, service.name only, scope opentelemetry-otlp 0.13.0.
    for (S s : spans) {
      if (s.python()) {
        assertThat(s.resource())
            .containsEntry("service.name", TgiTraceWriter.SERVICE_NAME)
            .containsEntry("telemetry.sdk.language", "python");
      } else {
        assertThat(s.resource()).containsOnlyKeys("service.name");
        assertThat(s.scope()).isEqualTo("opentelemetry-otlp");
        assertThat(s.kind()).isEqualTo(1);
        assertThat(s.attrs())
            .containsKeys("code.filepath", "code.namespace", "thread.id", "busy_ns", "idle_ns");
      }
    }

    for (RequestTruth t : truths) {
      S h =
          only(spans, s -> s.name().equals("chat_completions") && s.traceId().equals(t.traceId()));
      assertThat(h.parent()).isEqualTo(t.parentSpanId());
      assertThat(h.start()).isEqualTo(t.receivedNs());
      assertThat(h.end()).isBetween(t.finishNs(), t.finishNs() + 100_000);
      Map<String, Object> at = h.attrs();
      assertThat(at.get("parameters"))
          .asString()
          .contains("adapter_id: Some(\"llama-3-8b\")")
          .startsWith("GenerateParameters { ");
      assertThat(at.get("seed")).asString().matches("Some\\(\\d+\\)");
      long queue = parseRustDuration((String) at.get("queue_time"));
      long inference = parseRustDuration((String) at.get("inference_time"));
      long total = parseRustDuration((String) at.get("total_time"));
      long validation = parseRustDuration((String) at.get("validation_time"));
      assertThat(queue).isEqualTo(t.queueNs());
      assertThat(inference).isEqualTo(t.finishNs() - t.scheduledNs());
      assertThat(total - validation).isEqualTo(t.finishNs() - t.arrivalNs());
      assertThat(parseRustDuration((String) at.get("time_per_token")))
          .isEqualTo((t.finishNs() - t.scheduledNs()) / t.outputTokens());

      S schedule = only(spans, s -> s.name().equals("schedule") && s.traceId().equals(t.traceId()));
      assertThat(schedule.start()).isEqualTo(t.arrivalNs());
      S queued = only(spans, s -> s.name().equals("queued") && s.traceId().equals(t.traceId()));
      assertThat(queued.parent()).isEqualTo(schedule.id());
      assertThat(queued.end()).isEqualTo(t.scheduledNs());
      // generate_stream > schedule, async_stream > generate_stream, chat_completions > async_stream
      S gs = byId.get(schedule.parent());
      assertThat(gs.name()).isEqualTo("generate_stream");
      assertThat(byId.get(gs.parent()).name()).isEqualTo("async_stream");
      assertThat(byId.get(gs.parent()).parent()).isEqualTo(h.id());

      List<S> infers =
          spans.stream()
              .filter(s -> s.name().equals("infer") && s.parent().equals(schedule.id()))
              .sorted((x, y) -> Long.compare(x.start(), y.start()))
              .toList();
      assertThat(infers.get(0).start()).isEqualTo(t.scheduledNs());
      // Each infer span links to its batch (another trace) and the batch links back.
      for (S inf : infers) {
        assertThat(inf.links()).hasSize(1);
        S batch = byId.get(inf.links().get(0)[1]);
        assertThat(batch.name()).isEqualTo("batch");
        assertThat(batch.parent()).isEmpty();
        assertThat(batch.traceId()).isNotEqualTo(t.traceId());
        assertThat(batch.links().stream().map(l -> l[1]).toList()).contains(inf.id());
      }
      // The first infer's batch holds the Client prefill RPC of the first chunk.
      S firstBatch = byId.get(infers.get(0).links().get(0)[1]);
      S clientPrefill =
          only(
              spans,
              s ->
                  s.name().equals("prefill")
                      && s.traceId().equals(firstBatch.traceId())
                      && s.attrs()
                          .get("code.namespace")
                          .equals("text_generation_router_v3::client::grpc_client"));
      assertThat(clientPrefill.start()).isEqualTo(t.prefillChunks().get(0).startNs());
      assertThat(clientPrefill.attrs().get("size")).isInstanceOf(String.class);
      S pyPrefill = only(spans, s -> s.python() && s.parent().equals(clientPrefill.id()));
      assertThat(pyPrefill.name()).isEqualTo("/generate.v3.TextGenerationService/Prefill");
      assertThat(pyPrefill.kind()).isEqualTo(2);
      if (t.prefillChunks().size() == 1) {
        assertThat(clientPrefill.end()).isEqualTo(t.firstTokenNs());
      } else {
        // A later chunk runs in a Decode RPC of the batch the second infer span links to.
        S second = byId.get(infers.get(1).links().get(0)[1]);
        S clientDecode =
            only(
                spans,
                s ->
                    s.name().equals("decode")
                        && s.traceId().equals(second.traceId())
                        && s.attrs()
                            .get("code.namespace")
                            .equals("text_generation_router_v3::client::grpc_client"));
        assertThat(clientDecode.start()).isEqualTo(t.prefillChunks().get(1).startNs());
        assertThat(clientDecode.end()).isEqualTo(t.prefillChunks().get(1).endNs());
      }

      // One send_generation per token, under the request's infer spans, at the token's time.
      List<S> sends =
          spans.stream()
              .filter(s -> s.name().equals("send_generation") && s.traceId().equals(t.traceId()))
              .sorted((x, y) -> Long.compare(x.start(), y.start()))
              .toList();
      assertThat(sends).hasSize(t.outputTokens());
      for (int i = 0; i < sends.size(); i++) {
        assertThat(sends.get(i).start()).isEqualTo(t.tokenNs()[i]);
        assertThat(byId.get(sends.get(i).parent()).name()).isEqualTo("infer");
      }
      assertThat(sends.get(sends.size() - 1).attrs().get("generation"))
          .asString()
          .contains("generated_tokens: " + t.outputTokens())
          .contains(
              "finish_reason: " + (t.finishReason().equals("length") ? "Length" : "EosToken"));
    }

    // A finishes while B and C go on: the router filters the cached batch on the shard.
    assertThat(
            spans.stream()
                .filter(s -> s.name().equals("/generate.v3.TextGenerationService/FilterBatch")))
        .hasSize(1);
    S filter =
        only(
            spans,
            s ->
                s.name().equals("filter_batch")
                    && s.attrs().containsKey("request_ids")
                    && s.attrs()
                        .get("code.namespace")
                        .equals("text_generation_router_v3::client::sharded_client"));
    assertThat(filter.attrs())
        .containsEntry("request_ids", "[1, 2]")
        .containsEntry("batch_id", "0");
    // C's prefill is concatenated with the running batch on the shard.
    assertThat(spans.stream().filter(s -> s.name().equals("concatenate"))).hasSize(1);
    // The first batch had two requests.
    assertThat(
            spans.stream()
                .filter(
                    s ->
                        s.name().equals("batch")
                            && "2".equals(s.attrs().get("batch_size"))
                            && s.links().size() == 3))
        .hasSize(1);
  }

  @Test
  void generateWithoutTraceparentStartsItsOwnTrace() throws Exception {
    RequestTruth t0 = truths().get(0);
    RequestTruth t =
        new RequestTruth(
            t0.traceId(),
            "",
            t0.requestId(),
            t0.model(),
            t0.promptTokens(),
            t0.outputTokens(),
            t0.receivedNs(),
            t0.arrivalNs(),
            t0.scheduledNs(),
            t0.prefillChunks(),
            t0.firstTokenNs(),
            t0.tokenNs(),
            t0.finishNs(),
            t0.finishReason(),
            0);
    List<S> spans =
        spans(new TgiTraceWriter(TgiTraceWriter.Endpoint.GENERATE).write(List.of(t), "tgi-1"));
    S h = only(spans, s -> s.name().equals("generate") && s.parent().isEmpty());
    assertThat(h.traceId()).isNotEqualTo(t.traceId()).matches("[0-9a-f]{32}");
    assertThat(h.attrs().get("parameters"))
        .asString()
        .contains("adapter_id: None")
        .contains("do_sample: false");
    assertThat(h.attrs()).containsEntry("seed", "None");
    assertThat(h.events()).containsExactly("Success");
    S inferGenerate = only(spans, s -> s.name().equals("generate") && s.parent().equals(h.id()));
    assertThat(only(spans, s -> s.name().equals("generate_stream")).parent())
        .isEqualTo(inferGenerate.id());
  }

  @Test
  void sharedScenarioRequestsKeepTheirTimes() throws Exception {
    // Unaligned token times: every token becomes its own decode step; times must still be the
    // truth's.
    List<RequestTruth> truths =
        EngineScenario.generate(11, 12, T0, 1, true).stream()
            .map(EngineScenario.Request::truth)
            .toList();
    List<S> spans = spans(new TgiTraceWriter().write(truths, "tgi-0"));
    for (RequestTruth t : truths) {
      S h =
          only(spans, s -> s.name().equals("chat_completions") && s.traceId().equals(t.traceId()));
      assertThat(h.parent()).isEqualTo(t.parentSpanId());
      assertThat(h.start()).isEqualTo(t.receivedNs());
      assertThat(parseRustDuration((String) h.attrs().get("queue_time"))).isEqualTo(t.queueNs());
      assertThat(parseRustDuration((String) h.attrs().get("inference_time")))
          .isEqualTo(t.finishNs() - t.scheduledNs());
      assertThat(
              only(spans, s -> s.name().equals("schedule") && s.traceId().equals(t.traceId()))
                  .start())
          .isEqualTo(t.arrivalNs());
      assertThat(
              only(spans, s -> s.name().equals("queued") && s.traceId().equals(t.traceId())).end())
          .isEqualTo(t.scheduledNs());
      List<Long> sends =
          spans.stream()
              .filter(s -> s.name().equals("send_generation") && s.traceId().equals(t.traceId()))
              .map(S::start)
              .sorted()
              .toList();
      assertThat(sends)
          .containsExactly(java.util.Arrays.stream(t.tokenNs()).boxed().toArray(Long[]::new));
    }
  }

  // ---------------------------------------------------------------- helpers

  private static final Pattern DURATION =
      Pattern.compile("(\\d+)(?:\\.(\\d{1,9}))?(ns|\u00b5s|ms|s)");

  /** The parser an adapter needs for Rust's Debug text of a Duration. */
  static long parseRustDuration(String text) {
    Matcher m = DURATION.matcher(text);
    assertThat(m.matches()).as(text).isTrue();
    long unit =
        switch (m.group(3)) {
          case "ns" -> 1;
          case "\u00b5s" -> 1_000;
          case "ms" -> 1_000_000;
          default -> 1_000_000_000;
        };
    long v = Long.parseLong(m.group(1)) * unit;
    if (m.group(2) != null) {
      String frac = m.group(2);
      long scaled = Long.parseLong(frac);
      long denom = (long) Math.pow(10, frac.length());
      v += scaled * unit / denom;
    }
    return v;
  }

  record S(
      String name,
      String traceId,
      String id,
      String parent,
      int kind,
      long start,
      long end,
      Map<String, Object> attrs,
      List<String[]> links,
      List<String> events,
      String scope,
      Map<String, Object> resource,
      boolean python) {}

  private static List<S> spans(List<String> docs) throws Exception {
    List<S> out = new ArrayList<>();
    for (String d : docs) {
      for (JsonNode rs : JSON.readTree(d).path("resourceSpans")) {
        Map<String, Object> resource = attrs(rs.path("resource").path("attributes"));
        boolean python = "python".equals(resource.get("telemetry.sdk.language"));
        for (JsonNode ss : rs.path("scopeSpans")) {
          String scope = ss.path("scope").path("name").asText();
          for (JsonNode s : ss.path("spans")) {
            List<String[]> links = new ArrayList<>();
            s.path("links")
                .forEach(
                    l ->
                        links.add(
                            new String[] {l.path("traceId").asText(), l.path("spanId").asText()}));
            List<String> events = new ArrayList<>();
            s.path("events").forEach(e -> events.add(e.path("name").asText()));
            assertThat(s.path("spanId").asText()).matches("[0-9a-f]{16}");
            assertThat(s.path("traceId").asText()).matches("[0-9a-f]{32}");
            long start = Long.parseLong(s.path("startTimeUnixNano").asText());
            long end = Long.parseLong(s.path("endTimeUnixNano").asText());
            assertThat(end).isGreaterThanOrEqualTo(start);
            out.add(
                new S(
                    s.path("name").asText(),
                    s.path("traceId").asText(),
                    s.path("spanId").asText(),
                    s.path("parentSpanId").asText(""),
                    s.path("kind").asInt(),
                    start,
                    end,
                    attrs(s.path("attributes")),
                    links,
                    events,
                    scope,
                    resource,
                    python));
          }
        }
      }
    }
    return out;
  }

  private static Map<String, Object> attrs(JsonNode list) {
    Map<String, Object> m = new HashMap<>();
    for (JsonNode a : list) {
      JsonNode v = a.path("value");
      Object o;
      if (v.has("stringValue")) {
        o = v.path("stringValue").asText();
      } else if (v.has("intValue")) {
        o = Long.parseLong(v.path("intValue").asText());
      } else if (v.has("boolValue")) {
        o = v.path("boolValue").asBoolean();
      } else {
        o = v.path("doubleValue").asDouble();
      }
      m.put(a.path("key").asText(), o);
    }
    return m;
  }

  private static S only(List<S> spans, java.util.function.Predicate<S> p) {
    List<S> found = spans.stream().filter(p).toList();
    assertThat(found).hasSize(1);
    return found.get(0);
  }
}
