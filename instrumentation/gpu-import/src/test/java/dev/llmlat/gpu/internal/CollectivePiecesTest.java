package dev.llmlat.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.gpu.CollectiveSummary;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The collective pieces on hand-made timelines: no export, no store. */
class CollectivePiecesTest {
  private static final StepKey A = new StepKey("prefill a", 0);
  private static final StepKey B = new StepKey("decode a", 0);

  private static CollectiveKernel c(StepKey step, long start, long end) {
    return new CollectiveKernel(step, start, end, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  }

  @Test
  void matchesTheKthCollectiveOfEachStepAndLeavesExtrasOut() {
    RankTimeline r0 =
        new RankTimeline(
            0, null, 1, 0, List.of(c(A, 0, 10), c(A, 20, 30), c(B, 40, 50), c(null, 60, 70)), 0);
    RankTimeline r1 =
        new RankTimeline(
            0, null, 2, 1, List.of(c(A, 5, 10), c(B, 45, 50), c(A, 22, 30), c(B, 80, 90)), 0);
    StepCollectives.Matched m = StepCollectives.match(List.of(r0, r1));
    assertThat(m.collectives())
        .extracting(StepCollectives.Collective::step)
        .containsExactly(A, A, B);
    assertThat(m.collectives().get(1).startNs()).containsExactly(20, 22);
    assertThat(m.matchedPerRank()).containsExactly(3, 3);
  }

  @Test
  void offsetIsTheMedianEndDifferenceAndZeroWithinOneExport() {
    List<StepCollectives.Collective> cs = new ArrayList<>();
    long[] noise = {0, 3, -2, 1000, 1};
    for (int i = 0; i < noise.length; i++) {
      long end = 100 * i + 50;
      // rank 1 shares rank 0's export; rank 2's clock reads 7 ns behind (one outlier end)
      cs.add(
          new StepCollectives.Collective(
              A,
              i,
              new long[] {100 * i, 100 * i, 100 * i},
              new long[] {end, end + noise[i], end - 7 + noise[i]}));
    }
    RankClockAlignment.Offsets o = RankClockAlignment.estimate(new int[] {0, 0, 1}, cs);
    assertThat(o.offsetNs()).containsExactly(0, 0, 6); // median of 7, 4, 9, -993, 6
    assertThat(o.evidence()).containsExactly(5, 5, 5);
    assertThat(RankClockAlignment.estimate(new int[] {0, 1}, List.of()).offsetNs())
        .containsExactly(0, 0);
    assertThat(RankClockAlignment.median(new long[] {4, 1, 3, 2})).isEqualTo(2);
  }

  @Test
  void waitOwnTimeAndStragglerAfterAlignment() {
    // Rank 1 (another export) reads 1000 ns ahead; after alignment it starts 30 ns late in step A,
    // early in B.
    RankTimeline r0 =
        new RankTimeline(
            0, Path.of("r0"), -1, 0, List.of(c(A, 0, 100), c(A, 200, 260), c(B, 400, 500)), 5);
    RankTimeline r1 =
        new RankTimeline(
            1,
            Path.of("r1"),
            -1,
            0,
            List.of(c(A, 1030, 1100), c(A, 1210, 1260), c(B, 1350, 1500)),
            0);
    CollectiveSummary s = CollectiveAnalysis.summarize(List.of(r0, r1));
    assertThat(s.matched()).isEqualTo(3);
    CollectiveSummary.RankCollectives a = s.ranks().get(0);
    CollectiveSummary.RankCollectives b = s.ranks().get(1);
    assertThat(b.clockOffsetNs()).isEqualTo(-1000);
    assertThat(a.collectiveNs()).isEqualTo(100 + 60 + 100);
    assertThat(a.waitNs()).isEqualTo(30 + 10 + 0);
    assertThat(b.waitNs()).isEqualTo(0 + 0 + 50);
    assertThat(a.waitNs() - 40).isZero(); // rank 0 started last in B: no wait there
    assertThat(a.ownNs()).isEqualTo(70 + 50 + 100).isEqualTo(b.ownNs());
    assertThat(a.overlapNs()).isEqualTo(5);
    assertThat(s.steps())
        .extracting(CollectiveSummary.StepStraggler::name)
        .containsExactly("prefill a", "decode a");
    assertThat(s.steps().get(0).straggler()).isEqualTo(1);
    assertThat(s.steps().get(0).lateNs()).isEqualTo(40);
    assertThat(s.steps().get(1).straggler()).isEqualTo(0);
    assertThat(s.steps().get(1).lateNs()).isEqualTo(50);
  }

  @Test
  void overlapIsCollectiveTimeWithAComputeKernelOnTheSameDevice() {
    RankCollector rc = new RankCollector(true);
    rc.kernel(0, 100, "gemm", 7, 0, 1, 0);
    rc.kernel(50, 150, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 7, 0, 2, 0);
    rc.kernel(60, 80, "gemm", 7, 1, 3, 0); // another device: no overlap with device 0's collective
    rc.kernel(120, 130, "gemm", 7, 0, 4, 0);
    List<RankTimeline> t = rc.timelines(0, null, (corr, key) -> null);
    assertThat(t).hasSize(1);
    assertThat(t.get(0).overlapNs()).isEqualTo(50 + 10);
  }
}
