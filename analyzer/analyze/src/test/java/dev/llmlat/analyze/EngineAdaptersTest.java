package dev.llmlat.analyze;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.enginetraces.AgentGatewayWriter;
import dev.llmlat.analyze.enginetraces.EngineScenario;
import dev.llmlat.analyze.enginetraces.EngineTraceWriter;
import dev.llmlat.analyze.enginetraces.RequestTruth;
import dev.llmlat.analyze.enginetraces.SglangTraceWriter;
import dev.llmlat.analyze.enginetraces.TensorRtLlmTraceWriter;
import dev.llmlat.analyze.enginetraces.TgiTraceWriter;
import dev.llmlat.analyze.enginetraces.VllmTraceWriter;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.Attribution;
import dev.llmlat.attribution.ClockCorrection;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each engine's own spans (written by fixture writers that follow the engine's tracing source, see
 * src/test/resources/engine-traces/), behind a gateway with the real agent's span shapes, imported
 * through the product's OTLP/JSON path and attributed from the store. The truth is the scenario's:
 * TTFT within 1%, queue and prefill within 5% (or 0.1 ms: engines stamp through float seconds),
 * components summing exactly, no clock offset applied between clocks that agree, injected skews
 * recovered, and replicas told apart.
 */
class EngineAdaptersTest {
  static final long MS = 1_000_000L;
  static final long BASE = 1_795_970_300_000_000_000L;

  @TempDir Path dir;

  static Stream<Arguments> engines() {
    return Stream.of(
        Arguments.of("vLLM 0.21", VllmTraceWriter.v1(), "vLLM", false),
        Arguments.of("vLLM 0.16", VllmTraceWriter.v1(VllmTraceWriter.Release.V0_16), "vLLM", false),
        Arguments.of(
            "vLLM per-phase spans (PR #44402)", VllmTraceWriter.withPhaseSpans(), "vLLM", false),
        Arguments.of("TensorRT-LLM", new TensorRtLlmTraceWriter(), "TensorRT-LLM", true),
        Arguments.of("SGLang", new SglangTraceWriter(), "SGLang", false),
        Arguments.of("TGI", new TgiTraceWriter(), "TGI", false));
  }

  /** What the analyzer made of one run: attributions by trace id, read back through explain. */
  private Map<String, Attribution> run(
      List<EngineScenario.Request> requests, EngineTraceWriter writer, long[] skewNs)
      throws IOException {
    List<String> engine = new ArrayList<>();
    for (int replica = 0; replica < skewNs.length; replica++) {
      List<RequestTruth> onClock = new ArrayList<>();
      for (EngineScenario.Request r : requests) {
        if (r.replica() == replica) {
          onClock.add(EngineScenario.onClock(r.truth(), skewNs[replica]));
        }
      }
      engine.addAll(writer.write(onClock, "replica-" + replica));
    }
    Path gatewayFile = dir.resolve("gateway.otlp.jsonl");
    Files.write(gatewayFile, AgentGatewayWriter.write(requests));
    Path engineFile = dir.resolve(writer.engine() + ".otlp.jsonl");
    Files.write(engineFile, engine);
    Map<String, Attribution> out = new HashMap<>();
    try (EmbeddedClickHouse store =
        EmbeddedClickHouse.open(dir.resolve("ch"), EngineLibrary.locate())) {
      SchemaMigrator.bundled().migrate(store);
      for (Path file : List.of(gatewayFile, engineFile)) {
        try (StoreImportTarget target = new StoreImportTarget(store)) {
          GpuImporter.importFile(file, ExportFormat.OTLP_JSON, ImportOptions.defaults(), target);
          target.commit();
        }
      }
      Analyzer analyzer = new Analyzer(store);
      assertThat(analyzer.analyze(0, Long.MAX_VALUE / 2, true).written())
          .isEqualTo(requests.size());
      assertThat(
              store
                  .query(
                      "SELECT count(), countIf(GatewayInNs + NetworkInNs + EngineInNs + QueueNs + KvTransferNs"
                          + " + PrefillCpuNs + PrefillGpuNs + BatchInterferenceNs + FirstSampleNs + NetworkOutNs + GatewayOutNs"
                          + " + UnattributedNs = TtftNs) FROM llm_request_attribution FINAL")
                  .rows()
                  .get(0))
          .containsExactly(Integer.toString(requests.size()), Integer.toString(requests.size()));
      for (EngineScenario.Request r : requests) {
        out.put(r.truth().traceId(), analyzer.explain(r.truth().traceId()));
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void everyRequestIsAttributedWithTheEnginesQueueAndPrefill(
      String label, EngineTraceWriter writer, String adapter, boolean kvTransfer)
      throws IOException {
    List<EngineScenario.Request> requests = EngineScenario.generate(17, 24, BASE, 1, kvTransfer);
    Map<String, Attribution> byTrace = run(requests, writer, new long[] {0});
    for (EngineScenario.Request r : requests) {
      RequestTruth t = r.truth();
      Attribution a = byTrace.get(t.traceId());
      assertThat(a.engineAdapter()).as(label).isEqualTo(adapter);
      assertThat(a.startLayer()).isEqualTo("gateway");
      assertThat((double) a.ttftNs())
          .as("%s TTFT of %s", label, t.traceId())
          .isCloseTo(r.ttftNs(), within(r.ttftNs(), 0.01));
      // waiting to be scheduled, the KV transfer inside it counted apart
      long queue = t.scheduledNs() - t.arrivalNs() - t.kvTransferNs();
      assertThat((double) a.component("queue"))
          .as("%s queue of %s", label, t.traceId())
          .isCloseTo(queue, within(queue, 0.05));
      assertThat((double) a.component("kv_transfer"))
          .as("%s KV transfer", label)
          .isCloseTo(t.kvTransferNs(), within(t.kvTransferNs(), 0.05));
      long prefill = t.firstTokenNs() - t.scheduledNs();
      long attributedPrefill =
          a.component("prefill_cpu")
              + a.component("prefill_gpu")
              + a.component("batch_interference")
              + a.component("first_sample");
      assertThat((double) attributedPrefill)
          .as("%s prefill of %s", label, t.traceId())
          .isCloseTo(prefill, within(prefill, 0.05));
      long beforeQueue = t.arrivalNs() - r.gatewayStartNs();
      assertThat(
              (double)
                  (a.component("gateway_in")
                      + a.component("network_in")
                      + a.component("engine_in")))
          .as("%s up to the queue", label)
          .isCloseTo(beforeQueue, within(beforeQueue, 0.05));
      // one host clock for the gateway and the engine as far as the spans can tell: nothing moved
      assertThat(a.corrections()).as(label).noneMatch(ClockCorrection::applied);
      assertThat(a.model()).isEqualTo(t.model());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("engines")
  void replicasAreToldApartAndAnInjectedSkewOnOneIsRecovered(
      String label, EngineTraceWriter writer, String adapter, boolean kvTransfer)
      throws IOException {
    List<EngineScenario.Request> requests = EngineScenario.generate(29, 20, BASE, 2, kvTransfer);
    long[] skew = {-50 * MS, 50 * MS};
    Map<String, Attribution> byTrace = run(requests, writer, skew);
    java.util.Set<String> instances = new java.util.HashSet<>();
    for (EngineScenario.Request r : requests) {
      Attribution a = byTrace.get(r.truth().traceId());
      instances.add(a.engineInstance());
      assertThat((double) a.ttftNs())
          .as("%s TTFT", label)
          .isCloseTo(r.ttftNs(), within(r.ttftNs(), 0.01));
      // the bounds from the streamed exchanges hold each replica's offset to within a millisecond
      assertThat(
              a.corrections().stream()
                  .filter(ClockCorrection::applied)
                  .mapToLong(c -> c.offsetAt(r.truth().arrivalNs())))
          .as("%s corrections %s", label, a.corrections())
          .anySatisfy(
              o ->
                  assertThat((double) o)
                      .isCloseTo(
                          -skew[r.replica()], org.assertj.core.data.Offset.offset(1.5 * MS)));
      // the stretch across the two clocks is right to within the uncertainty the correction reports
      long uncertainty =
          a.corrections().stream()
              .filter(ClockCorrection::applied)
              .mapToLong(ClockCorrection::uncertaintyNs)
              .max()
              .orElseThrow();
      assertThat(uncertainty).as(label).isLessThan(2 * MS);
      long beforeQueue = r.truth().arrivalNs() - r.gatewayStartNs();
      assertThat(
              (double)
                  (a.component("gateway_in")
                      + a.component("network_in")
                      + a.component("engine_in")))
          .as("%s up to the queue", label)
          .isCloseTo(beforeQueue, org.assertj.core.data.Offset.offset((double) uncertainty));
      long queue = r.truth().scheduledNs() - r.truth().arrivalNs() - r.truth().kvTransferNs();
      assertThat((double) a.component("queue"))
          .as("%s queue", label)
          .isCloseTo(queue, within(queue, 0.05));
    }
    assertThat(instances).as(label).hasSize(2);
  }

  /** 5% of the truth, or 0.1 ms where that is less: engines stamp times through float seconds. */
  static org.assertj.core.data.Offset<Double> within(long truth, double share) {
    return org.assertj.core.data.Offset.offset(Math.max(share * Math.abs(truth), 0.1 * MS));
  }
}
