package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class StolenTimeTest {
  @Test
  void stealIsTheEighthCounterOfTheAggregateLine() {
    // user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user
    // already)
    StolenTime a = StolenTime.parse("cpu  1000 10 200 3000 50 0 40 100 500 0");
    StolenTime b = StolenTime.parse("cpu  1300 10 260 3440 50 0 40 300 700 0");
    assertThat(a).isEqualTo(new StolenTime(100, 4400));
    // 1000 ticks passed, 200 of them stolen
    assertThat(b.shareSince(a)).isEqualTo(0.2);
    assertThat(a.shareSince(a)).isZero();
  }

  @Test
  void aPerCpuLineIsRefused() {
    assertThatThrownBy(() -> StolenTime.parse("cpu0 1 2 3 4 5 6 7 8"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cpu0");
  }

  @Test
  void thisMachineCountsForward() {
    StolenTime first = StolenTime.sample();
    StolenTime later = StolenTime.sample();
    assertThat(later.totalTicks()).isGreaterThanOrEqualTo(first.totalTicks());
    assertThat(later.shareSince(first)).isBetween(0.0, 1.0);
  }
}
