package dev.llmlat.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class DecodeTokenTimesTest {
  @Test
  void roundTripsRandomTokenTimes() {
    Random random = new Random(7);
    long start = 1_795_969_885_782_395_664L;
    long[] times = new long[500];
    long t = start;
    for (int i = 0; i < times.length; i++) {
      t += random.nextInt(400_000_000); // up to 400 ms gaps, zero allowed
      times[i] = t;
    }
    List<Long> deltas = DecodeTokenTimes.encode(start, times, times.length);
    assertThat(deltas).hasSize(500).allSatisfy(d -> assertThat(d).isBetween(0L, 400_000_000L));
    assertThat(DecodeTokenTimes.decode(start, deltas)).containsExactly(times);
    assertThat(DecodeTokenTimes.encode(start, times, 3))
        .containsExactly(times[0] - start, times[1] - times[0], times[2] - times[1]);
  }

  @Test
  void rejectsTimesGoingBackwards() {
    assertThatThrownBy(() -> DecodeTokenTimes.encode(100, new long[] {150, 140}, 2))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
