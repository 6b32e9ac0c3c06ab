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
    assertThat(Quantiles.ofSorted(new long[] {10, 20, 30, 40, 50}, 0.99))
        .isCloseTo(49.6, within(1e-9));
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
    Bootstrap.Interval c =
        Bootstrap.stratified(
            List.of(new double[] {5, 5, 5}, new double[] {5, 5}), Quantiles::median, 0.95);
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

  @Test
  void meansKeepNanosecondsPastTwoToThe53() {
    // 2^53 + 1 is not a double: plain summation of {2^53, 1, 1} gives 2^53 and a mean short by 2/3
    double big = 9_007_199_254_740_992d;
    assertThat(Means.of(new double[] {big, 1, 1})).isEqualTo((big + 2) / 3);
    assertThat(Means.of(new double[] {1, 2, 3, 4})).isEqualTo(2.5);
    assertThat(Means.of(new double[0])).isNaN();
  }

  @Test
  void differenceOfTwoSamplesHoldsTheShiftAndZeroForTheSameData() {
    java.util.Random r = new java.util.Random(7);
    double[] a = new double[2000];
    double[] b = new double[2000];
    for (int i = 0; i < a.length; i++) {
      a[i] = r.nextGaussian();
      b[i] = a[i] + 3; // the same values shifted: every quantile and the mean move by exactly 3
    }
    Bootstrap.Difference shifted = Bootstrap.difference(a, b, new double[] {0.5, 0.99});
    for (Bootstrap.Interval d :
        List.of(shifted.quantiles().get(0), shifted.quantiles().get(1), shifted.mean())) {
      assertThat(d.estimate()).isCloseTo(3, within(1e-12));
      assertThat(d.low()).isLessThan(3);
      assertThat(d.high()).isGreaterThan(3);
    }
    Bootstrap.Difference same = Bootstrap.difference(a, a.clone(), new double[] {0.5});
    assertThat(same.quantiles().get(0).estimate()).isZero();
    assertThat(same.mean().low()).isNegative();
    assertThat(same.mean().high()).isPositive();
    // two means of 2000 standard normal draws each: the half-width is 1.96 * sqrt(2 / 2000) = 0.062
    double[] c = new double[2000];
    for (int i = 0; i < c.length; i++) {
      c[i] = r.nextGaussian();
    }
    Bootstrap.Difference independent = Bootstrap.difference(a, c, new double[] {0.5});
    assertThat((independent.mean().high() - independent.mean().low()) / 2)
        .isCloseTo(0.062, within(0.008));
    // the median's: 1.2533 times the mean's for a normal distribution, 0.078
    Bootstrap.Interval median = independent.quantiles().get(0);
    assertThat((median.high() - median.low()) / 2).isCloseTo(0.078, within(0.012));
    // the same data give the same intervals: the resamples are seeded
    assertThat(Bootstrap.difference(a, c, new double[] {0.5})).isEqualTo(independent);
  }

  @Test
  void differenceResamplesWholeRowsAndItsQuantilesAreType7() {
    java.util.Random r = new java.util.Random(3);
    int n = 500;
    double[][] a = new double[3][n];
    double[][] b = new double[3][n];
    for (int i = 0; i < n; i++) {
      a[0][i] = r.nextInt(100);
      a[1][i] =
          a[0][i]; // the same column twice: drawn by rows, both come out alike in every resample
      a[2][i] = r.nextInt(100);
      b[0][i] = r.nextInt(100) + 40;
      b[1][i] = b[0][i];
      b[2][i] = r.nextInt(100);
    }
    Bootstrap.Difference[] d = Bootstrap.difference(a, b, new double[] {0.9}, 0.95);
    assertThat(d[1]).isEqualTo(d[0]);
    // column 0 moved by 40 (uniform 0..99 on both sides: the means differ by 40 +- 1.96 * 29 *
    // sqrt(2 / 500) = 40 +- 3.6)
    assertThat(d[0].mean().estimate()).isBetween(36.0, 44.0);
    assertThat(d[0].mean().low()).isPositive();
    assertThat(d[0].quantiles().get(0).low()).isPositive();
    // column 2 did not: its interval holds 0 (a 95% interval of two same-distribution samples,
    // estimate within 3.6 of 0)
    assertThat(Math.abs(d[2].mean().estimate())).isLessThan(3.6);
    // a constant column on both sides has a zero-width interval
    Bootstrap.Difference constant =
        Bootstrap.difference(new double[] {5, 5, 5}, new double[] {6, 6}, new double[] {0.9});
    assertThat(constant.quantiles().get(0)).isEqualTo(new Bootstrap.Interval(1, 1, 1));
    // the estimate is type 7 (numpy): the p90 of 1..4 is 3.7, of 10..50 is 46
    Bootstrap.Difference small =
        Bootstrap.difference(
            new double[] {4, 1, 3, 2}, new double[] {10, 20, 30, 40, 50}, new double[] {0.9});
    assertThat(small.quantiles().get(0).estimate()).isCloseTo(46 - 3.7, within(1e-12));
    assertThat(small.mean().estimate()).isCloseTo(30 - 2.5, within(1e-12));
    assertThatThrownBy(
            () -> Bootstrap.difference(new double[0], new double[] {1}, new double[] {0.5}))
        .hasMessageContaining("side A");
    assertThatThrownBy(
            () ->
                Bootstrap.difference(
                    new double[][] {{1, 2}, {1}},
                    new double[][] {{1}, {1}},
                    new double[] {0.5},
                    0.95))
        .hasMessageContaining("differ in length");
    assertThatThrownBy(
            () -> Bootstrap.difference(new double[] {1}, new double[] {1}, new double[] {1.5}))
        .hasMessageContaining("between 0 and 1");
  }

  @Test
  void theQuantilesOfAResampleAreTheQuantilesOfItsValues() {
    // a resample given as counts per row must give what Quantiles gives on the resample written out
    java.util.Random r = new java.util.Random(11);
    double[] column = new double[37];
    for (int i = 0; i < column.length; i++) {
      column[i] = r.nextInt(20); // ties too
    }
    double[] qs = {0, 0.1, 0.5, 0.9, 0.99, 1};
    ResampledColumns side = new ResampledColumns(new double[][] {column}, "A", qs);
    for (int k = 0; k < 50; k++) {
      char[] counts = new char[column.length];
      double[] written = new double[column.length];
      for (int i = 0; i < column.length; i++) {
        int row = r.nextInt(column.length);
        counts[row]++;
        written[i] = column[row];
      }
      double[] out = new double[qs.length + 1];
      side.statistics(0, counts, out);
      for (int q = 0; q < qs.length; q++) {
        assertThat(out[q]).as("q %s", qs[q]).isCloseTo(Quantiles.of(written, qs[q]), within(1e-9));
      }
      assertThat(out[qs.length]).isCloseTo(Means.of(written), within(1e-9));
    }
  }
}
