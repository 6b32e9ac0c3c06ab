package dev.llmlat.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ArrivalTimesTest {
  /** Gaps of a schedule, in seconds. */
  private static double[] gaps(LoadShape shape, int n) {
    ArrivalTimes times = ArrivalTimes.of(shape);
    double[] gaps = new double[n];
    long previous = times.next();
    assertThat(previous).isZero(); // the first request goes at once
    for (int i = 0; i < n; i++) {
      long t = times.next();
      gaps[i] = (t - previous) / 1e9;
      previous = t;
    }
    return gaps;
  }

  @Test
  void poissonGapsAreExponentialWithTheRatesMean() {
    double rate = 8;
    int n = 20_000;
    double[] gaps = gaps(new LoadShape.Poisson(rate, 20261201), n);
    double mean = 0;
    for (double g : gaps) {
      mean += g / n;
    }
    // an exponential gap's standard deviation equals its mean (1/rate): the sample mean's is that /
    // sqrt(n);
    // four of them leave a seeded run no room to pass by luck and a correct one no room to fail
    double sigmaOfMean = (1 / rate) / Math.sqrt(n);
    assertThat(mean).isCloseTo(1 / rate, within(4 * sigmaOfMean));
    // and the shape, not just the mean: P(gap > mean) = e^-1 for an exponential (a constant gap
    // gives 0)
    long longer = java.util.Arrays.stream(gaps).filter(g -> g > 1 / rate).count();
    double p = Math.exp(-1);
    assertThat(longer / (double) n).isCloseTo(p, within(4 * Math.sqrt(p * (1 - p) / n)));
  }

  @Test
  void theSameSeedGivesTheSameScheduleAndAnotherADifferentOne() {
    assertThat(gaps(new LoadShape.Poisson(5, 1), 100))
        .containsExactly(gaps(new LoadShape.Poisson(5, 1), 100));
    assertThat(gaps(new LoadShape.Poisson(5, 1), 100))
        .isNotEqualTo(gaps(new LoadShape.Poisson(5, 2), 100));
  }

  @Test
  void constantRateNeverDrifts() {
    ArrivalTimes times = ArrivalTimes.of(new LoadShape.Constant(3));
    long last = 0;
    for (int i = 0; i <= 3_000; i++) {
      last = times.next();
    }
    // the 3000th request after the first is due exactly 1000 s later, whatever 1/3 s rounds to
    assertThat(last).isEqualTo(1_000_000_000_000L);
  }
}
