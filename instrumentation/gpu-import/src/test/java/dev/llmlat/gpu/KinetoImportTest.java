package dev.llmlat.gpu;

import static dev.llmlat.gpu.ImportFixtures.attr;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.trace.v1.Span;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class KinetoImportTest {
  /**
   * The GPU activities of a trace, by a plain tree walk: kind (0 kernel, 1 memcpy, 2 memset),
   * start, end in ns.
   */
  static List<long[]> activities(JsonNode root) {
    List<long[]> out = new ArrayList<>();
    for (JsonNode e : root.get("traceEvents")) {
      String cat = e.path("cat").asText("").toLowerCase(Locale.ROOT);
      int kind =
          cat.equals("kernel")
              ? 0
              : cat.equals("gpu_memcpy") || cat.equals("memcpy")
                  ? 1
                  : cat.equals("gpu_memset") || cat.equals("memset") ? 2 : -1;
      if (kind < 0 || !"X".equals(e.path("ph").asText()) || !e.has("ts")) {
        continue;
      }
      long ts = ns(e.get("ts").decimalValue());
      long dur = e.has("dur") ? ns(e.get("dur").decimalValue()) : 0;
      out.add(new long[] {kind, ts, ts + dur});
    }
    return out;
  }

  static long ns(BigDecimal micros) {
    return micros.movePointRight(3).setScale(0, RoundingMode.HALF_UP).longValueExact();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "public/kineto__hta_alexnet_a100.json.gz",
        "public/kineto__hta_cuda_event_sync_a100.json.gz",
        "public/kineto__hta_legacy_inference_rank1.json.gz",
        "public/kineto__hta_ns_resolution_v100.json.gz",
        "public/kineto__hta_rocm6.2_mi250.json.gz",
        "public/kineto__hta_triton_example_a100.json.gz",
        "public/kineto__tracelens_hf_qwen1.5-0.5b-chat_h100.json.gz",
        "public/kineto__tracelens_sglang_qwen3-8b_decode_mi300x.json.gz",
        "public/kineto__tracelens_sglang_qwen3-8b_prefill_mi300x.json.gz",
        "public/kineto__tracelens_vllm_b200_prefill_eager.json.gz",
        "public/kineto__tracelens_vllm_decode_fullgraph_mi300x.json.gz",
        "public/kineto__tracelens_vllm_prefilldecode_piecewise_mi300x.json.gz",
        "h200-tinylm/kineto/kineto_trace.json.gz"
      })
  void importsAndSummarizesWithFiguresFromATreeWalk(String name) throws Exception {
    Path file = ImportFixtures.file(name);
    JsonNode root = ImportFixtures.tree(file);
    List<long[]> acts = activities(root);
    long base = root.has("baseTimeNanoseconds") ? root.get("baseTimeNanoseconds").asLong() : 0;
    long kernels = acts.stream().filter(a -> a[0] == 0).count();
    long memcpys = acts.stream().filter(a -> a[0] == 1).count();
    long memsets = acts.stream().filter(a -> a[0] == 2).count();

    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    long[] lastProgress = new long[2];
    ImportReport report =
        GpuImporter.importFile(
            file,
            ImportOptions.defaults()
                .withProgress(
                    (d, t) -> {
                      lastProgress[0] = d;
                      lastProgress[1] = t;
                    }),
            sink);
    assertThat(report.format()).isEqualTo(ExportFormat.KINETO_JSON);
    assertThat(report.kernels()).isEqualTo(kernels);
    assertThat(report.memcpys()).isEqualTo(memcpys);
    assertThat(report.memsets()).isEqualTo(memsets);
    assertThat(lastProgress[0]).isEqualTo(lastProgress[1]).isPositive();
    assertThat(report.clockRule())
        .isEqualTo(
            root.has("baseTimeNanoseconds")
                ? "kineto:baseTimeNanoseconds+ts*1000"
                : "kineto:ts*1000 (no baseTimeNanoseconds; ts are absolute Unix us)");
    assertThat(report.spans()).isEqualTo(kernels + memcpys + memsets + report.stepsMatched());
    if (!acts.isEmpty()) {
      long first = acts.stream().mapToLong(a -> a[1]).min().getAsLong() + base;
      assertThat(
              sink.spans.stream()
                  .filter(s -> attr(s, LlmlatAttributes.GPU_KIND) != null)
                  .mapToLong(Span::getStartTimeUnixNano)
                  .min()
                  .getAsLong())
          .isEqualTo(first);
    }

    GpuSummary summary = GpuSummary.of(file);
    assertThat(summary.kernels()).isEqualTo(kernels);
    assertThat(summary.memcpys()).isEqualTo(memcpys);
    List<long[]> intervals = new ArrayList<>();
    acts.forEach(a -> intervals.add(new long[] {a[1], a[2]}));
    long busy = ImportFixtures.union(intervals);
    long total =
        acts.isEmpty()
            ? 0
            : acts.stream().mapToLong(a -> a[2]).max().getAsLong()
                - acts.stream().mapToLong(a -> a[1]).min().getAsLong();
    List<long[]> copies = new ArrayList<>();
    acts.stream().filter(a -> a[0] == 1).forEach(a -> copies.add(new long[] {a[1], a[2]}));
    assertThat(summary.busyNs()).isEqualTo(busy);
    assertThat(summary.totalNs()).isEqualTo(total);
    assertThat(summary.idleNs()).isEqualTo(total - busy);
    assertThat(summary.memcpyNs()).isEqualTo(ImportFixtures.union(copies));
    assertThat(summary.streams().stream().mapToLong(GpuSummary.StreamSummary::kernels).sum())
        .isEqualTo(kernels);
  }

  /**
   * TraceLens's own expected gpu_timeline figures for these traces (from its repository's test
   * oracles).
   */
  @ParameterizedTest
  @CsvSource({
    "public/kineto__tracelens_sglang_qwen3-8b_decode_mi300x.json.gz, 9.7729, 473.750",
    "public/kineto__tracelens_sglang_qwen3-8b_prefill_mi300x.json.gz, 492.807, 987.289",
    "public/kineto__tracelens_vllm_decode_fullgraph_mi300x.json.gz, 10.7177, 10.7432",
    "public/kineto__tracelens_vllm_prefilldecode_piecewise_mi300x.json.gz, 156.086, 156.466"
  })
  void summaryMatchesTraceLensOracle(String name, double busyMs, double totalMs) throws Exception {
    GpuSummary s = GpuSummary.of(ImportFixtures.file(name));
    assertThat(s.busyNs() / 1e6).isCloseTo(busyMs, within(0.001));
    assertThat(s.totalNs() / 1e6).isCloseTo(totalMs, within(0.001));
    JsonNode json = ImportFixtures.JSON.readTree(s.toJson());
    List<String> keys = new ArrayList<>();
    json.fieldNames().forEachRemaining(keys::add);
    assertThat(keys)
        .containsExactly(
            "total_ms", "busy_ms", "computation_ms", "memcpy_ms", "idle_ms", "kernels", "memcpys");
    assertThat(json.get("busy_ms").decimalValue())
        .isEqualByComparingTo(BigDecimal.valueOf(s.busyNs(), 6));
  }

  @Test
  void h200KinetoStepsJoinRequestsInArrivalOrder() throws Exception {
    Path file = ImportFixtures.file("h200-tinylm/kineto/kineto_trace.json.gz");
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report = GpuImporter.importFile(file, ImportOptions.defaults(), sink);
    H200Join.assertJoin(sink.spans, file.resolveSibling("requests.jsonl"), report);
    assertThat(report.stepsMatched()).isEqualTo(50);
    // Kernels launched inside a step's record_function range carry its trace; warm-up ones do not.
    assertThat(report.kernels() - report.unattributedTotal()).isPositive();
    assertThat(report.unattributed()).doesNotContainKey(UnattributedReason.NO_RANGES_IN_EXPORT);
  }

  @Test
  void graphReplayKernelsFindTheirLaunchByCorrelation() throws Exception {
    // vLLM full HIP-graph decode: 425 kernels, only 4 with External id; the replayed kernels share
    // the
    // graph launch's correlation id, so they still find their launching thread.
    Path file =
        ImportFixtures.file("public/kineto__tracelens_vllm_decode_fullgraph_mi300x.json.gz");
    JsonNode root = ImportFixtures.tree(file);
    java.util.Set<Long> launchCorrelations = new java.util.HashSet<>();
    long expected = 0;
    for (JsonNode e : root.get("traceEvents")) {
      String cat = e.path("cat").asText();
      if ((cat.equals("cuda_runtime") || cat.equals("cuda_driver"))
          && e.path("args").has("correlation")) {
        launchCorrelations.add(e.get("args").get("correlation").asLong());
      }
    }
    for (JsonNode e : root.get("traceEvents")) {
      if (e.path("cat").asText().equals("kernel")
          && launchCorrelations.contains(e.path("args").path("correlation").asLong(-1))) {
        expected++;
      }
    }
    ImportFixtures.Collector sink = new ImportFixtures.Collector();
    ImportReport report = GpuImporter.importFile(file, ImportOptions.defaults(), sink);
    long withThread =
        sink.spans.stream()
            .filter(s -> "kernel".equals(attr(s, LlmlatAttributes.GPU_KIND)))
            .filter(s -> attr(s, LlmlatAttributes.THREAD_ID) != null)
            .count();
    assertThat(expected).isGreaterThan(400);
    assertThat(withThread).isEqualTo(expected);
    assertThat(report.unattributed()).containsOnlyKeys(UnattributedReason.NO_RANGE_MATCHED_PATTERN);
  }
}
