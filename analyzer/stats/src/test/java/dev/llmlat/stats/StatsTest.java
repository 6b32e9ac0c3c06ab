package dev.llmlat.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatsTest {
  @Test
  void quantilesInterpolateBetweenClosestRanksAsNumpyDoes() {
    // numpy.percentile([1, 2, 3, 4], [0, 25, 50, 90, 100]) == [1, 1.75, 2.5, 3.7, 4]
    double[] v = {4, 1, 3, 2};
    assertThat(Quantiles.of(v, 0)).isEqualTo(1);
    assertThat(Quantiles.of(v, 0.25)).isEqualTo(1.75);
    assertThat(Quantiles.median(v)).isEqualTo(2.5);
    assertThat(Quantiles.of(v, 0.9)).isCloseTo(3.7, within(1e-12));
    assertThat(Quantiles.of(v, 1)).isEqualTo(4);
    assertThat(Quantiles.ofSorted(new long[] {10, 20, 30, 40, 50}, 0.99)).isCloseTo(49.6, within(1e-9));
    assertThat(Quantiles.median(new double[0])).isNaN();
    assertThatThrownBy(() -> Quantiles.of(v, 1.5)).hasMessageContaining("between 0 and 1");
  }

  @Test
  void bootstrapIntervalsHoldTheEstimateAndNarrowWithMoreData() {
    double[] small = new double[20];
    double[] large = new double[2000];
    java.util.Random r = new java.util.Random(1);
    for (int i = 0; i < large.length; i++) {
      large[i] = r.nextGaussian();
      if (i < small.length) {
        small[i] = large[i];
      }
    }
    Bootstrap.Interval a = Bootstrap.of(small, Quantiles::median);
    Bootstrap.Interval b = Bootstrap.of(large, Quantiles::median);
    assertThat(a.low()).isLessThanOrEqualTo(a.estimate());
    assertThat(a.high()).isGreaterThanOrEqualTo(a.estimate());
    assertThat(b.high() - b.low()).isLessThan((a.high() - a.low()) / 3);
    // the median of a standard normal is 0: a 95% interval of 2000 draws holds it
    assertThat(b.low()).isLessThan(0);
    assertThat(b.high()).isGreaterThan(0);
    // within groups: a constant group adds no width
    Bootstrap.Interval c = Bootstrap.stratified(List.of(new double[] {5, 5, 5}, new double[] {5, 5}), Quantiles::median, 0.95);
    assertThat(c.low()).isEqualTo(5);
    assertThat(c.high()).isEqualTo(5);
  }

  @Test
  void wilsonIntervalStaysInsideZeroAndOne() {
    // Wilson 95% for 0/10: [0, 0.2775]; for 10/10: [0.7225, 1]; for 5/10: [0.2366, 0.7634]
    assertThat(Wilson.of95(0, 10).low()).isEqualTo(0);
    assertThat(Wilson.of95(0, 10).high()).isCloseTo(0.2775, within(1e-4));
    assertThat(Wilson.of95(10, 10).low()).isCloseTo(0.7225, within(1e-4));
    assertThat(Wilson.of95(5, 10).low()).isCloseTo(0.2366, within(1e-4));
    assertThat(Wilson.of95(5, 10).high()).isCloseTo(0.7634, within(1e-4));
    assertThatThrownBy(() -> Wilson.of95(3, 2)).hasMessageContaining("successes");
  }
}
