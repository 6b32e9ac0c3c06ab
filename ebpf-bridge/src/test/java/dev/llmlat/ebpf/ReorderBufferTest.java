package dev.llmlat.ebpf;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReorderBufferTest {
  private static final long MS = 1_000_000;
  private final ReorderBuffer buffer = new ReorderBuffer(Duration.ofMillis(200));
  private final List<ProbeEvent> out = new ArrayList<>();

  static ProbeEvent.Pop pop(long tid, long monoNs) {
    return new ProbeEvent.Pop(1, tid, monoNs);
  }

  @Test
  void releasesOutOfOrderInputInTimeOrderOnceItIsOlderThanTheWindow() {
    ProbeEvent c = pop(3, 1_300 * MS);
    ProbeEvent a = pop(1, 1_000 * MS);
    ProbeEvent d = pop(4, 1_450 * MS);
    ProbeEvent b = pop(2, 1_100 * MS);
    List.of(c, a, d, b).forEach(buffer::add);

    // at 1.4 s what is older than 1.2 s is final: a and b, in time order; c and d may still be
    // overtaken
    buffer.release(1_400 * MS, out::add);
    assertThat(out).containsExactly(a, b);
    assertThat(buffer.held()).isEqualTo(2);

    ProbeEvent late = pop(5, 1_250 * MS); // arrives last but happened before c and d
    buffer.add(late);
    buffer.release(1_600 * MS, out::add);
    assertThat(out).containsExactly(a, b, late, c);
    assertThat(buffer.held()).isEqualTo(1);
    assertThat(buffer.released()).isEqualTo(4);
  }

  @Test
  void holdsAnEventExactlyAtTheHorizon() {
    ProbeEvent e = pop(1, 1_000 * MS);
    buffer.add(e);
    assertThat(buffer.horizon(1_200 * MS)).isEqualTo(1_000 * MS);
    buffer.release(1_200 * MS, out::add);
    assertThat(out).isEmpty();
    buffer.release(1_200 * MS + 1, out::add);
    assertThat(out).containsExactly(e);
  }

  @Test
  void ordersASyncByItsEndAndEqualTimesByArrival() {
    // the wait began before the launch but ended after it: it comes after the launch
    ProbeEvent sync =
        new ProbeEvent.Sync(1, 1, 1_000 * MS, 1_050 * MS, "cudaStreamSynchronize", 7, 0);
    ProbeEvent launch =
        new ProbeEvent.Launch(
            1,
            1,
            1_010 * MS,
            "cudaLaunchKernel",
            0x40,
            new int[] {1, 1, 1},
            new int[] {32, 1, 1},
            0,
            7);
    ProbeEvent first = pop(2, 1_020 * MS);
    ProbeEvent second = pop(3, 1_020 * MS);
    List.of(sync, launch, first, second).forEach(buffer::add);
    buffer.release(2_000 * MS, out::add);
    assertThat(out).containsExactly(launch, first, second, sync);
  }

  @Test
  void drainHandsOnEverythingHeldInOrderWhenTheInputEnds() {
    ProbeEvent b = pop(2, 5_000 * MS);
    ProbeEvent a = pop(1, 4_900 * MS);
    buffer.add(b);
    buffer.add(a);
    buffer.release(5_000 * MS, out::add); // both inside the window: nothing yet
    assertThat(out).isEmpty();
    buffer.drain(out::add);
    assertThat(out).containsExactly(a, b);
    assertThat(buffer.held()).isZero();
    assertThat(buffer.released()).isEqualTo(2);
  }
}
