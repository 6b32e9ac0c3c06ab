package dev.llmlat.ebpf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real thing, no GPU needed: the nvcc-built launch_loop pushes llmlat NVTX step ranges on two
 * threads and launches a known number of kernels in each through the shared libcudart (which fails
 * them with "no device" after the call); bpftrace probes the runtime and the NVTX injection library
 * and the bridge turns that into spans.
 */
class EbpfBridgeCudaTest {
  private static final int THREADS = 2;
  private static final int RANGES = 3;
  private static final int LAUNCHES = 5;
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void needsBpf() throws Exception {
    TestTargets.assumeBpf();
  }

  @Test
  void launchesInNvtxStepRangesBecomeStepSpansOnTheirTraces() throws Exception {
    Path program = TestTargets.program();
    Path output = Files.createTempFile(TestTargets.BUILD, "launch_loop", ".out");
    TestTargets.CollectingSink sink = new TestTargets.CollectingSink();
    BridgeOptions options =
        BridgeOptions.builder()
            .command(program + " steps " + THREADS + " " + RANGES + " " + LAUNCHES)
            .commandOutput(output)
            .nvtxInjection(TestTargets.injection())
            .build();
    BridgeSummary summary;
    try (EbpfBridge bridge = TestTargets.start(options, sink)) {
      assertThat(bridge.program().probes())
          .anyMatch(p -> p.endsWith(":cudaLaunchKernel"))
          .anyMatch(p -> p.endsWith(":llmlat_nvtx_push"));
      summary = bridge.awaitCompletion(Duration.ofSeconds(120));
    }

    // What the program says it did.
    List<JsonNode> lines =
        Files.readAllLines(output, StandardCharsets.UTF_8).stream()
            .filter(l -> l.startsWith("{"))
            .map(TestTargets::json)
            .toList();
    long pid = lines.getFirst().get("pid").asLong();
    long start = lines.getFirst().get("start_unix_ns").asLong();
    long end = lines.getLast().get("end_unix_ns").asLong();
    Map<String, JsonNode> rangesByText = new HashMap<>();
    for (JsonNode l : lines) {
      if (l.has("text")) {
        rangesByText.put(l.get("text").asText(), l);
      }
    }
    assertThat(rangesByText).hasSize(THREADS * RANGES);

    assertThat(summary.launches()).isEqualTo(THREADS * RANGES * LAUNCHES);
    assertThat(summary.attributedLaunches()).isEqualTo(THREADS * RANGES * LAUNCHES);
    assertThat(summary.synchronizations()).isEqualTo(THREADS * RANGES);
    assertThat(summary.nvtxRanges()).isEqualTo(THREADS * RANGES);
    assertThat(summary.stepRanges()).isEqualTo(THREADS * RANGES);
    assertThat(summary.malformedLines()).isZero();

    for (ExportTraceServiceRequest batch : sink.batches) {
      for (ResourceSpans rs : batch.getResourceSpansList()) {
        assertThat(attr(rs.getResource(), LlmlatAttributes.LAYER)).isEqualTo("ebpf");
        assertThat(attr(rs.getResource(), "process.pid")).isEqualTo(Long.toString(pid));
      }
    }
    List<Span> spans = sink.spans();
    List<Span> steps = spans.stream().filter(s -> s.getName().equals("step")).toList();
    List<Span> syncs =
        spans.stream().filter(s -> s.getName().startsWith("cudaStreamSynchronize")).toList();
    assertThat(steps).hasSize(THREADS * RANGES);
    assertThat(syncs).hasSize(THREADS * RANGES);
    assertThat(spans).hasSize(steps.size() + syncs.size());

    Map<Long, Long> lastStepEndByThread = new HashMap<>();
    for (Span step :
        steps.stream()
            .sorted((a, b) -> Long.compare(a.getStartTimeUnixNano(), b.getStartTimeUnixNano()))
            .toList()) {
      String text = attr(step, LlmlatAttributes.NVTX_TEXT);
      JsonNode range = rangesByText.get(text);
      assertThat(range).as("range text %s", text).isNotNull();
      List<String> traces = List.of(text.substring(text.indexOf("traces=") + 7).split(","));
      assertThat(HexFormat.of().formatHex(step.getTraceId().toByteArray()))
          .isEqualTo(traces.get(0));
      assertThat(step.getLinksList())
          .extracting(l -> HexFormat.of().formatHex(l.getTraceId().toByteArray()))
          .containsExactlyElementsOf(traces);
      assertThat(attr(step, LlmlatAttributes.STEP_SPAN_ID)).isEqualTo(text.substring(12, 28));
      assertThat(attr(step, LlmlatAttributes.STEP_KIND))
          .isEqualTo(range.get("range").asInt() % 2 == 0 ? "prefill" : "decode");
      long tid = range.get("tid").asLong();
      assertThat(attr(step, LlmlatAttributes.THREAD_ID)).isEqualTo(Long.toString(tid));
      assertThat(attr(step, EbpfAttributes.LAUNCHES)).isEqualTo(Integer.toString(LAUNCHES));
      assertThat(attr(step, EbpfAttributes.SYNCS)).isEqualTo("1");

      // Inside the program's own window, in order, one event per launch inside the step.
      assertThat(step.getStartTimeUnixNano()).isBetween(start, end);
      assertThat(step.getEndTimeUnixNano()).isBetween(step.getStartTimeUnixNano(), end);
      assertThat(step.getStartTimeUnixNano())
          .isGreaterThan(lastStepEndByThread.getOrDefault(tid, 0L));
      lastStepEndByThread.put(tid, step.getEndTimeUnixNano());
      assertThat(step.getEventsList())
          .hasSize(LAUNCHES)
          .allSatisfy(
              e -> {
                assertThat(e.getName()).isEqualTo("cudaLaunchKernel");
                assertThat(e.getTimeUnixNano())
                    .isBetween(step.getStartTimeUnixNano(), step.getEndTimeUnixNano());
                assertThat(attr(e.getAttributesList(), EbpfAttributes.KERNEL))
                    .contains("llmlat_test_kernel");
                assertThat(attr(e.getAttributesList(), EbpfAttributes.GRID))
                    .isEqualTo((4 + range.get("range").asInt()) + ",2,1");
                assertThat(attr(e.getAttributesList(), EbpfAttributes.BLOCK)).isEqualTo("128,1,1");
                assertThat(attr(e.getAttributesList(), LlmlatAttributes.GPU_STREAM)).isEqualTo("0");
              });
      assertThat(step.getEventsList()).extracting(Span.Event::getTimeUnixNano).isSorted();

      // The stream sync at the end of the range is the step's child, inside it, on its trace.
      List<Span> mine =
          syncs.stream().filter(s -> s.getParentSpanId().equals(step.getSpanId())).toList();
      assertThat(mine).hasSize(1);
      Span sync = mine.getFirst();
      assertThat(sync.getTraceId()).isEqualTo(step.getTraceId());
      assertThat(attr(sync, LlmlatAttributes.THREAD_ID)).isEqualTo(Long.toString(tid));
      assertThat(sync.getStartTimeUnixNano())
          .isGreaterThanOrEqualTo(step.getEventsList().getLast().getTimeUnixNano());
      assertThat(sync.getEndTimeUnixNano())
          .isBetween(sync.getStartTimeUnixNano(), step.getEndTimeUnixNano());
    }
  }

  static String attr(Span span, String key) {
    return attr(span.getAttributesList(), key);
  }

  static String attr(Resource resource, String key) {
    return attr(resource.getAttributesList(), key);
  }

  static String attr(List<KeyValue> attrs, String key) {
    for (KeyValue kv : attrs) {
      if (kv.getKey().equals(key)) {
        AnyValue v = kv.getValue();
        return switch (v.getValueCase()) {
          case STRING_VALUE -> v.getStringValue();
          case INT_VALUE -> Long.toString(v.getIntValue());
          case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
          default -> v.toString();
        };
      }
    }
    return null;
  }
}
