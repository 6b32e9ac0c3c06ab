package dev.llmlat.analyze;

import static dev.llmlat.testing.SpanFixtures.id;
import static dev.llmlat.testing.SpanFixtures.kv;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.enginetraces.AgentGatewayWriter;
import dev.llmlat.analyze.enginetraces.EngineScenario;
import dev.llmlat.analyze.enginetraces.EngineTraceWriter;
import dev.llmlat.analyze.enginetraces.SglangTraceWriter;
import dev.llmlat.analyze.enginetraces.TensorRtLlmTraceWriter;
import dev.llmlat.analyze.enginetraces.TgiTraceWriter;
import dev.llmlat.analyze.enginetraces.VllmTraceWriter;
import dev.llmlat.analyze.otlp.OtlpSpanRecords;
import dev.llmlat.analyze.store.TraceReader;
import dev.llmlat.attribution.SpanRecord;
import dev.llmlat.ingest.spans.GpuKernelRowEncoder;
import dev.llmlat.ingest.spans.SpanRouter;
import dev.llmlat.otlpjson.OtlpJsonReader;
import dev.llmlat.runtime.home.EngineLibrary;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same OTLP spans both ways: through the ingester's row encoding into the embedded store and
 * back with {@link TraceReader}, and straight through {@link OtlpSpanRecords}. The records must be
 * equal field for field, for every engine convention's spans, every attribute value type, every
 * resource rule for host and process instance, and per-kernel GPU spans (which neither gives).
 */
class OtlpSpanRecordsTest {
  static final long BASE = 1_795_970_300_000_000_000L;

  @TempDir Path dir;

  @Test
  void convertedSpansEqualWhatTheStoreGivesBackForTheSameSpans() throws Exception {
    List<ExportTraceServiceRequest> requests = new ArrayList<>();
    requests.add(SpanFixtures.everyField());
    requests.add(resourceRules());
    long seed = 5;
    for (EngineTraceWriter writer :
        List.of(
            VllmTraceWriter.v1(),
            VllmTraceWriter.withPhaseSpans(),
            new SglangTraceWriter(),
            new TensorRtLlmTraceWriter(),
            new TgiTraceWriter())) {
      // each engine behind the agent's gateway spans, requests of their own (writers derive span
      // ids from the truth)
      List<EngineScenario.Request> scenario = EngineScenario.generate(seed++, 6, BASE, 2, true);
      requests.addAll(parse(AgentGatewayWriter.write(scenario)));
      requests.addAll(
          parse(
              writer.write(
                  scenario.stream().map(EngineScenario.Request::truth).toList(), "replica-0")));
    }

    List<SpanRecord> converted = new ArrayList<>();
    requests.forEach(r -> converted.addAll(OtlpSpanRecords.of(r)));
    Set<String> traces = new TreeSet<>();
    converted.forEach(s -> traces.add(s.traceId()));

    List<SpanRecord> stored;
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      SpanRouter rows = new SpanRouter();
      requests.forEach(rows::add);
      assertThat(rows.kernels())
          .as("the fixture's per-kernel span goes to gpu_kernels")
          .isEqualTo(1);
      rows.insertInto(store, null);
      stored = new TraceReader(store).read(traces, 1, 0);
    }

    assertThat(converted).hasSizeGreaterThan(100);
    Map<String, SpanRecord> fromStore = byId(stored);
    Map<String, SpanRecord> direct = byId(converted);
    assertThat(direct.keySet()).isEqualTo(fromStore.keySet());
    for (Map.Entry<String, SpanRecord> e : direct.entrySet()) {
      assertThat(e.getValue()).as("span %s", e.getKey()).isEqualTo(fromStore.get(e.getKey()));
    }
    // the rules the comparison must have crossed
    assertThat(converted)
        .extracting(SpanRecord::instance)
        .contains("instance-7", "pod-3", "pid 99", "pid 1234", "host-by-name", "");
    assertThat(converted).extracting(SpanRecord::host).contains("host-by-id", "host-by-name", "");
  }

  /** One span per rule of host and instance, a clamped duration, and one per-kernel GPU span. */
  private static ExportTraceServiceRequest resourceRules() {
    ExportTraceServiceRequest.Builder out = ExportTraceServiceRequest.newBuilder();
    String[][] resources = {
      {"service.instance.id", "instance-7", "host.name", "host-by-name"},
      {"host.name", "host-by-name"},
      {"host.id", "host-by-id", "k8s.pod.name", "pod-3"},
      {"process.pid", "99"},
      {"vllm.process_id", "1234"},
      {}
    };
    for (int i = 0; i < resources.length; i++) {
      Resource.Builder resource =
          Resource.newBuilder()
              .addAttributes(kv("service.name", AnyValue.newBuilder().setStringValue("svc-" + i)));
      for (int k = 0; k < resources[i].length; k += 2) {
        resource.addAttributes(
            kv(resources[i][k], AnyValue.newBuilder().setStringValue(resources[i][k + 1])));
      }
      long start = BASE + i * 1_000_000L;
      out.addResourceSpans(
          ResourceSpans.newBuilder()
              .setResource(resource)
              .addScopeSpans(
                  ScopeSpans.newBuilder()
                      .setScope(InstrumentationScope.newBuilder().setName("scope-" + i))
                      .addSpans(
                          Span.newBuilder()
                              .setTraceId(id(String.format("%032x", 0xabc00 + i)))
                              .setSpanId(id(String.format("%016x", 0x100 + i)))
                              .setName("span-" + i)
                              .setKind(Span.SpanKind.SPAN_KIND_SERVER)
                              // an end before the start: the store keeps a zero duration
                              .setStartTimeUnixNano(start)
                              .setEndTimeUnixNano(i == 5 ? start : start + 5_000)
                              .addAttributes(kv("n", AnyValue.newBuilder().setIntValue(i))))));
    }
    Span kernel =
        Span.newBuilder()
            .setTraceId(id(String.format("%032x", 0xabcff)))
            .setSpanId(id("00000000000000ff"))
            .setName("gemm")
            .setStartTimeUnixNano(BASE)
            .setEndTimeUnixNano(BASE + 1000)
            .addAttributes(
                kv(GpuKernelRowEncoder.KIND, AnyValue.newBuilder().setStringValue("kernel")))
            .build();
    out.addResourceSpans(
        ResourceSpans.newBuilder()
            .setResource(
                Resource.newBuilder()
                    .addAttributes(kv("llmlat.layer", AnyValue.newBuilder().setStringValue("gpu"))))
            .addScopeSpans(ScopeSpans.newBuilder().addSpans(kernel)));
    return out.build();
  }

  private List<ExportTraceServiceRequest> parse(List<String> jsonLines) throws Exception {
    return parse(dir, jsonLines);
  }

  /** OTLP/JSON lines as the file importer reads them (through a file under {@code dir}). */
  static List<ExportTraceServiceRequest> parse(Path dir, List<String> jsonLines) throws Exception {
    Path file = Files.createTempFile(dir, "otlp", ".jsonl");
    Files.writeString(file, String.join("\n", jsonLines) + "\n", StandardCharsets.UTF_8);
    List<ExportTraceServiceRequest> out = new ArrayList<>();
    new OtlpJsonReader(file).readRequests(out::add);
    return out;
  }

  /** Spans by trace and span id, none twice. */
  private static Map<String, SpanRecord> byId(List<SpanRecord> spans) {
    Map<String, SpanRecord> out = new TreeMap<>();
    for (SpanRecord s : spans) {
      assertThat(out.put(s.traceId() + "/" + s.spanId(), s))
          .as("span %s/%s once", s.traceId(), s.spanId())
          .isNull();
    }
    return out;
  }
}
