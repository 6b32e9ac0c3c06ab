package dev.llmlat.analyze;

import static dev.llmlat.testing.SpanFixtures.id;
import static dev.llmlat.testing.SpanFixtures.kv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.enginetraces.AgentGatewayWriter;
import dev.llmlat.analyze.enginetraces.EngineScenario;
import dev.llmlat.analyze.enginetraces.EngineTraceWriter;
import dev.llmlat.analyze.enginetraces.ResourceLabels;
import dev.llmlat.analyze.enginetraces.SglangTraceWriter;
import dev.llmlat.analyze.enginetraces.TensorRtLlmTraceWriter;
import dev.llmlat.analyze.enginetraces.TgiTraceWriter;
import dev.llmlat.analyze.enginetraces.VllmTraceWriter;
import dev.llmlat.analyze.otlp.OtlpSpanRecords;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.attribution.engines.EngineAdapter;
import dev.llmlat.attribution.engines.EngineAdapters;
import dev.llmlat.ingest.spans.SpanRouter;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.LlmlatSpanNames;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.SpanFixtures;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every adapter's request rule both ways: the generated SQL against the embedded store, and the
 * Java check over the same spans straight from OTLP ({@link OtlpSpanRecords}, live attribution's
 * path). Every span of every engine fixture (bare, and on a resource labelled {@code
 * llmlat.layer=engine}), the agent's gateway spans (written, and as captured in h200-e2e), the
 * scheduler SDK's shape and a set of edge cases must get the same answer from both, adapter by
 * adapter.
 */
class RequestRulesTest {
  static final long BASE = 1_795_970_300_000_000_000L;
  static final String TTFT = "gen_ai.latency.time_to_first_token";

  @TempDir Path dir;
  private int next;

  @Test
  void theGeneratedSqlAndTheJavaCheckAgreeOnEverySpan() throws Exception {
    List<ExportTraceServiceRequest> requests = new ArrayList<>();
    long seed = 11;
    List<EngineTraceWriter> writers =
        List.of(
            VllmTraceWriter.v1(VllmTraceWriter.Release.V0_11),
            VllmTraceWriter.v1(VllmTraceWriter.Release.V0_16),
            VllmTraceWriter.v1(),
            VllmTraceWriter.withPhaseSpans(),
            new TensorRtLlmTraceWriter(),
            new SglangTraceWriter(),
            new TgiTraceWriter());
    for (EngineTraceWriter writer : writers) {
      for (boolean labelled : List.of(false, true)) {
        // requests of their own per fixture: writers derive span ids from the truth
        List<EngineScenario.Request> scenario = EngineScenario.generate(seed++, 6, BASE, 2, true);
        List<String> engine =
            writer.write(
                scenario.stream().map(EngineScenario.Request::truth).toList(), "replica-" + seed);
        requests.addAll(parse(AgentGatewayWriter.write(scenario)));
        requests.addAll(
            parse(labelled ? ResourceLabels.add(engine, "llmlat.layer", "engine") : engine));
      }
    }
    // the real agent's gateway spans of ../shared/traces/h200-e2e
    Path capture = dev.llmlat.sharedtraces.SharedTraces.resolve("h200-e2e");
    requests.addAll(parse(Files.readAllLines(capture.resolve("gateway.otlp.jsonl"))));
    requests.add(SpanFixtures.everyField());
    requests.add(schedulerSdk());
    ExportTraceServiceRequest edges = edgeCases();
    requests.add(edges);
    java.util.Set<String> edgeKeys = new java.util.HashSet<>();
    OtlpSpanRecords.of(edges).forEach(s -> edgeKeys.add(s.traceId() + "/" + s.spanId()));

    Map<String, List<String>> java = new TreeMap<>();
    Map<String, String> javaAdapter = new TreeMap<>();
    for (ExportTraceServiceRequest r : requests) {
      for (SpanRecord s : OtlpSpanRecords.of(r)) {
        String key = s.traceId() + "/" + s.spanId();
        List<String> answers = new ArrayList<>();
        for (EngineAdapter a : EngineAdapters.all()) {
          answers.add(EngineAdapters.requestCondition(a).test(s) ? "1" : "0");
        }
        EngineAdapter chosen = EngineAdapters.forRequest(s);
        answers.add(chosen != null ? "1" : "0");
        assertThat(java.put(key, answers)).as("span %s once", key).isNull();
        javaAdapter.put(
            key,
            chosen == null
                ? ""
                : chosen.name() + " " + s.name() + " " + s.scope() + " " + s.layer());
      }
    }

    StringBuilder select = new StringBuilder("SELECT concat(TraceId, '/', SpanId)");
    for (EngineAdapter a : EngineAdapters.all()) {
      select.append(", toString(").append(EngineAdapters.requestCondition(a).sql()).append(')');
    }
    select.append(", toString(").append(EngineAdapters.requestWhere()).append(") FROM otel_traces");
    Map<String, List<String>> sql = new TreeMap<>();
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      SpanRouter rows = new SpanRouter();
      requests.forEach(rows::add);
      rows.insertInto(store, null);
      for (List<String> row : store.query(select.toString()).rows()) {
        sql.put(row.get(0), row.subList(1, row.size()));
      }
    }

    assertThat(sql.keySet()).isEqualTo(java.keySet());
    for (Map.Entry<String, List<String>> e : java.entrySet()) {
      assertThat(sql.get(e.getKey()))
          .as(
              "span %s (%s), adapters %s then any",
              e.getKey(), javaAdapter.get(e.getKey()), EngineAdapters.names())
          .isEqualTo(e.getValue());
      // the fixtures' spans name at most one engine: none is two adapters' request (an edge case
      // may be)
      if (!edgeKeys.contains(e.getKey())) {
        assertThat(
                e.getValue().subList(0, EngineAdapters.all().size()).stream()
                    .filter("1"::equals)
                    .count())
            .as("adapters claiming %s", e.getKey())
            .isLessThanOrEqualTo(1);
      }
    }
    // what the comparison must have crossed: each adapter's requests, engine-labelled ones, the
    // edge cases
    List<String> claimed = javaAdapter.values().stream().filter(v -> !v.isEmpty()).toList();
    for (EngineAdapter a : EngineAdapters.all()) {
      assertThat(claimed).as(a.name()).anyMatch(v -> v.startsWith(a.name() + " "));
    }
    assertThat(claimed)
        .contains(
            "vLLM llm_request vllm.llm_engine engine",
            "vLLM llm_request vllm.tracing.otel engine",
            "TensorRT-LLM llm_request trt.llm engine",
            "llmlat scheduler SDK llm_request dev.llmlat.scheduler engine",
            "vLLM llm_request vllm.llm_engine ",
            "TGI generate opentelemetry-otlp ",
            "SGLang Req ü1 sglang server ");
    assertThat(java.values().stream().filter(v -> v.getLast().equals("0")).count())
        .isGreaterThan(100);
  }

  /** The scheduler SDK's request and its children, as its tracer writes them. */
  private ExportTraceServiceRequest schedulerSdk() {
    String trace = String.format("%032x", 0x5d0000 + next++);
    ScopeSpans.Builder spans =
        ScopeSpans.newBuilder()
            .setScope(InstrumentationScope.newBuilder().setName("dev.llmlat.scheduler"));
    String request = String.format("%016x", 0x5d00);
    spans.addSpans(span(trace, request, "", LlmlatSpanNames.REQUEST, 0, 50));
    int n = 1;
    for (String child :
        List.of(LlmlatSpanNames.QUEUE, LlmlatSpanNames.PREFILL, LlmlatSpanNames.DECODE)) {
      spans.addSpans(
          span(trace, String.format("%016x", 0x5d00 + n), request, child, 10 * n, 10 * n + 10));
      n++;
    }
    spans.addSpans(
        span(
            String.format("%032x", 0x5d0100),
            String.format("%016x", 0x5d10),
            "",
            LlmlatSpanNames.STEP,
            10,
            20));
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(kv("service.name", str("engine")))
                        .addAttributes(kv("llmlat.layer", str("engine"))))
                .addScopeSpans(spans))
        .build();
  }

  /**
   * Spans at the rules' edges: {@code {name, scope, layer, attribute, value, ...}}. A value parsed
   * as a number is written as a double, as engines write latencies.
   */
  private ExportTraceServiceRequest edgeCases() {
    String[][] cases = {
      {"llm_request", "", "", "gen_ai.latency.e2e", "0.5"}, // e2e alone: no vLLM request
      {"llm_request", "", "", TTFT, "0.1"}, // vLLM's shape without its scope
      {"llm_request", "", "engine", TTFT, "0.1"}, // the layer alone: the SDK's
      {"llm_request", "vllm.llm_engine", "engine", TTFT, "0.1"},
      {"llm_request", "vllm.llm_engine", "", "gen_ai.latency.kv_cache_transfer_time", "0.01"},
      {"llm_request", "", "", "gen_ai.latency.kv_cache_transfer_time", "0.01", TTFT, "0.1"},
      {"llm_request", "trt.llm", "engine", TTFT, "0.1"},
      {"llm_request", "vllm", "gateway"},
      {"llm_request", "other", "gateway", TTFT, "0.1"},
      {"llm_request", "dev.llmlat.scheduler", "engine", "module", "sglang::request"},
      {"Req 1a2b3c4d", "sglang server", "", "module", "sglang::request"},
      {"decode Req abc", "custom", "engine", "module", "sglang::request"},
      {"Req ü1", "sglang server", "", "module", "sglang::request"},
      {"Req 123456789", "sglang server", "", "module", "sglang::request"},
      {"Req ab", "sglang server", ""},
      {"prefill Req a\tb", "sglang server", "", "module", "sglang::request"},
      {"generate", "opentelemetry-otlp", "", "queue_time", "12.5µs"},
      {"generate", "", "engine", "queue_time", "3ms"},
      {"chat_completions", "", "", "queue_time", "soon"},
      {"completions", "", "", "queue_time", "1.5s "},
      {"it's \\d odd", "q'uote\\", "eng'ine", "a'b", "c\\d"},
    };
    ExportTraceServiceRequest.Builder out = ExportTraceServiceRequest.newBuilder();
    for (String[] c : cases) {
      Span.Builder s =
          span(
              String.format("%032x", 0xed0000 + next++),
              String.format("%016x", 0xed00 + next),
              "",
              c[0],
              0,
              10)
              .toBuilder();
      for (int k = 3; k < c.length; k += 2) {
        s.addAttributes(
            kv(
                c[k],
                c[k + 1].matches("[0-9.]+")
                    ? AnyValue.newBuilder().setDoubleValue(Double.parseDouble(c[k + 1]))
                    : str(c[k + 1])));
      }
      Resource.Builder resource =
          Resource.newBuilder().addAttributes(kv("service.name", str("edge")));
      if (!c[2].isEmpty()) {
        resource.addAttributes(kv("llmlat.layer", str(c[2])));
      }
      out.addResourceSpans(
          ResourceSpans.newBuilder()
              .setResource(resource)
              .addScopeSpans(
                  ScopeSpans.newBuilder()
                      .setScope(InstrumentationScope.newBuilder().setName(c[1]))
                      .addSpans(s)));
    }
    return out.build();
  }

  private static Span span(
      String trace, String spanId, String parent, String name, long startMs, long endMs) {
    Span.Builder s =
        Span.newBuilder()
            .setTraceId(id(trace))
            .setSpanId(id(spanId))
            .setName(name)
            .setKind(Span.SpanKind.SPAN_KIND_SERVER)
            .setStartTimeUnixNano(BASE + startMs * 1_000_000L)
            .setEndTimeUnixNano(BASE + endMs * 1_000_000L);
    if (!parent.isEmpty()) {
      s.setParentSpanId(id(parent));
    }
    return s.build();
  }

  private static AnyValue.Builder str(String v) {
    return AnyValue.newBuilder().setStringValue(v);
  }

  private List<ExportTraceServiceRequest> parse(List<String> jsonLines) throws Exception {
    return OtlpSpanRecordsTest.parse(dir, jsonLines);
  }
}
