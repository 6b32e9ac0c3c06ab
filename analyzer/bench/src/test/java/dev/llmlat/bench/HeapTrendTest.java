package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The memory rule of `bench soak`: a sawtooth stays flat, a steady leak does not. */
class HeapTrendTest {
  static List<HeapTrend.Point> series(double mbPerMinute, double noiseMb) {
    List<HeapTrend.Point> points = new ArrayList<>();
    for (int i = 0; i < 18; i++) { // 3 minutes, a sample every 10 s
      double minute = i / 6.0;
      points.add(
          new HeapTrend.Point(
              minute, 40 + mbPerMinute * minute + (i % 2 == 0 ? noiseMb : -noiseMb)));
    }
    return points;
  }

  @Test
  void batchesInFlightMoveSamplesNotTheLine() {
    HeapTrend t = HeapTrend.of(series(0, 6));
    assertThat(t.slopeMbPerMinute()).isCloseTo(0, within(1.0));
    assertThat(t.flat()).isTrue();
  }

  @Test
  void aSteadyLeakIsCaught() {
    HeapTrend t = HeapTrend.of(series(4, 2)); // 4 MB/min: ~11 MB over the 2.8 minutes sampled
    assertThat(t.slopeMbPerMinute()).isCloseTo(4, within(0.5));
    assertThat(t.riseMb()).isCloseTo(4 * 17 / 6.0, within(1.5));
    assertThat(t.allowedMb()).isEqualTo(8);
    assertThat(t.flat()).isFalse();
  }

  @Test
  void theToleranceScalesWithALargeHeap() {
    List<HeapTrend.Point> big =
        series(4, 0).stream().map(p -> new HeapTrend.Point(p.minute(), p.mb() + 160)).toList();
    assertThat(HeapTrend.of(big).allowedMb()).isCloseTo(20, within(0.01)); // 10% of 200 MB
    assertThat(HeapTrend.of(big).flat()).isTrue();
  }

  @Test
  void oneSampleIsNotATrend() {
    assertThatThrownBy(() -> HeapTrend.of(List.of(new HeapTrend.Point(0, 1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at least 2 samples after warm-up");
  }
}
