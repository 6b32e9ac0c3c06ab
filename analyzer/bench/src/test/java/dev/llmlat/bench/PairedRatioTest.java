package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class PairedRatioTest {
  @Test
  void medianAndAnIntervalAroundIt() {
    double[] r = {0.90, 1.10, 1.00, 1.02, 0.98, 1.05, 0.95, 1.01, 0.99, 1.03, 0.97};
    PairedRatio p = PairedRatio.of(List.of(r));
    assertThat(p.median()).isEqualTo(1.00);
    assertThat(p.low()).isLessThanOrEqualTo(p.median()).isGreaterThanOrEqualTo(0.90);
    assertThat(p.high()).isGreaterThanOrEqualTo(p.median()).isLessThanOrEqualTo(1.10);
    assertThat(p.high() - p.low()).isPositive();
    assertThat(PairedRatio.of(List.of(r))).isEqualTo(p); // fixed seed
    assertThat(p.asChange()).startsWith("+0.0% [");
  }

  @Test
  void roundsAreResampledWithinTheirRun() {
    // Two runs that never vary inside: every resample keeps 3 ratios of 1.0 and 4 of 1.1, so the
    // interval is the median itself; resampling across runs would spread it.
    PairedRatio p =
        PairedRatio.of(List.of(new double[] {1.0, 1.0, 1.0}, new double[] {1.1, 1.1, 1.1, 1.1}));
    assertThat(p.median()).isEqualTo(1.1);
    assertThat(p.low()).isEqualTo(1.1);
    assertThat(p.high()).isEqualTo(1.1);
    PairedRatio even = PairedRatio.of(List.of(new double[] {1.0, 2.0}));
    assertThat(even.median()).isCloseTo(1.5, within(1e-12));
  }

  @Test
  void noRoundsIsAnError() {
    assertThatThrownBy(() -> PairedRatio.of(List.of(new double[0])))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
