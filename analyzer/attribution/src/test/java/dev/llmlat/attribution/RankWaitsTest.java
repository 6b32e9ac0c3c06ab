package dev.llmlat.attribution;

import static dev.llmlat.attribution.Spans.MS;
import static dev.llmlat.attribution.Spans.id;
import static dev.llmlat.attribution.Spans.span;
import static dev.llmlat.attribution.Spans.trace;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A prefill step two ranks ran (one GPU step span each): the k-th all-reduce on each rank is one
 * collective.
 */
class RankWaitsTest {
  private static final String T = trace(1);
  private static final String ALL_REDUCE =
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

  /**
   * Rank 0 (device 0) starts at 10 ms, rank 1 at 20 ms; their all-reduces start at 30/40 and 60/75
   * ms.
   */
  private static List<SpanRecord> twoRanks(boolean collectives) {
    List<SpanRecord> s = new ArrayList<>();
    s.add(
        span(T, id(1), "llm_request", 0, 3000)
            .kind("Server")
            .event("llmlat.first_token", 100)
            .build());
    s.add(
        span(T, id(10), "step", 10, 90)
            .gpu()
            .attr("llmlat.step.kind", "prefill")
            .attr("llmlat.trace_ids", "[\"" + T + "\"]")
            .attr("llmlat.gpu.busy_ns", 70 * MS)
            .build());
    s.add(
        span(T, id(11), "step", 20, 90)
            .gpu()
            .attr("llmlat.step.kind", "prefill")
            .attr("llmlat.trace_ids", "[\"" + T + "\"]")
            .attr("llmlat.gpu.busy_ns", 60 * MS)
            .build());
    if (collectives) {
      double[][] starts = {{30, 60}, {40, 75}};
      for (int rank = 0; rank < 2; rank++) {
        for (int k = 0; k < 2; k++) {
          s.add(
              span(T, id(20 + 2 * rank + k), ALL_REDUCE, starts[rank][k], 80 + k)
                  .gpu()
                  .parent(id(10 + rank))
                  .attr("llmlat.gpu.kind", "kernel")
                  .attr("gpu.device.id", rank)
                  .attr("process.pid", 100 + rank)
                  .build());
        }
      }
    }
    return s;
  }

  @Test
  void theWaitForTheLateRankIsTakenOutOfTheGpuTimeAndNamesTheRank() {
    Attribution a = TraceAttribution.attribute(twoRanks(true)).get(0);
    // rank 0 waited 10 + 15 ms for rank 1, rank 1 none; one step from 10 to 90 ms, busy as its
    // busiest rank (70 ms)
    assertThat(a.component("rank_wait")).isEqualTo(25 * MS);
    assertThat(a.component("prefill_gpu")).isEqualTo(45 * MS);
    assertThat(a.component("prefill_cpu")).isEqualTo(10 * MS);
    assertThat(a.component("queue")).isEqualTo(10 * MS);
    assertThat(a.components().values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(a.ttftNs())
        .isEqualTo(100 * MS);
    assertThat(a.rankWaits())
        .containsExactly(
            new Attribution.RankWait("rank 1", "device 1, pid 101, engine-host", 25 * MS, 1));
  }

  @Test
  void withoutCollectivesTheCopiesStayAsTheyWere() {
    Attribution a = TraceAttribution.attribute(twoRanks(false)).get(0);
    assertThat(a.component("rank_wait")).isZero();
    assertThat(a.rankWaits()).isEmpty();
    assertThat(a.components().values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(a.ttftNs());
  }

  @Test
  void collectiveKernelNamesAreTheImportersOnes() {
    assertThat(dev.llmlat.semconv.CollectiveKernels.matches(ALL_REDUCE)).isTrue();
    assertThat(
            dev.llmlat.semconv.CollectiveKernels.matches("ncclKernel_AllReduce_RING_LL_Sum_half"))
        .isTrue();
    assertThat(
            dev.llmlat.semconv.CollectiveKernels.matches(
                "void vllm::cross_device_reduce_1stage<half, 2>(...)"))
        .isTrue();
    assertThat(dev.llmlat.semconv.CollectiveKernels.matches("ampere_bf16_s16816gemm_bf16_128x128"))
        .isFalse();
  }
}
