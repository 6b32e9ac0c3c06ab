package dev.llmlat.gpu.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link LaunchCalls} against a plain map of (correlation id, process) to the earliest call, over
 * the shapes of id streams it stores differently: dense ids per process (arrays), ids before a
 * process's first one or far beyond its band (hash table), sparse ids, hundreds of processes and
 * threads, and a call split between the two halves of the runtime table.
 */
class LaunchCallsTest {
  private record Call(long globalTid, long start) {}

  private record Key(long correlation, long process) {}

  @Test
  void denseIdsOfOneProcessRoughlyInOrderWithDuplicateDriverCalls() {
    Random random = new Random(1);
    Model model = new Model();
    long pid = 4242L << 24;
    for (long c = 1_000_000; c < 1_300_000; c++) {
      long correlation = c + random.nextInt(64) - 32; // rows are only roughly in correlation order
      long thread = pid | (1 + random.nextInt(3));
      long start = c * 100 + random.nextInt(1000);
      model.add(correlation, thread, start);
      if (random.nextInt(3)
          == 0) { // the driver call made under the runtime call: same id, later or earlier
        model.add(correlation, thread, start + random.nextInt(200) - 100);
      }
    }
    model.verify(random);
  }

  @Test
  void idsBelowTheFirstAndFarBeyondTheBandAreFound() {
    Model model = new Model();
    long pid = 7L << 24;
    model.add(500_000, pid | 1, 10);
    model.add(10, pid | 1, 5); // far below the first id
    model.add(499_990, pid | 2, 9);
    for (long c = 500_001; c < 600_000; c++) {
      model.add(c, pid | 1, c);
    }
    model.add(Integer.MAX_VALUE * 4L, pid | 3, 1); // far beyond: would make the arrays sparse
    model.add(-5, pid | 3, 2);
    model.verify(new Random(2));
  }

  @Test
  void sparseIdsManyProcessesAndManyThreads() {
    Random random = new Random(3);
    Model model = new Model();
    for (int i = 0; i < 200_000; i++) {
      long process = random.nextInt(300);
      long correlation =
          random.nextInt(50) == 0 ? random.nextLong(1L << 40) : (long) random.nextInt(20_000) * 997;
      long thread = (process << 24) | random.nextInt(100);
      model.add(correlation, thread, random.nextLong(1L << 50));
    }
    model.verify(random);
  }

  /**
   * Both halves of the table hold a call with one id: the earlier start wins, whichever half has
   * it.
   */
  @Test
  void earlierCallWinsAcrossTheTwoHalves() {
    LaunchCalls first = new LaunchCalls();
    LaunchCalls later = new LaunchCalls();
    long pid = 9L << 24;
    first.add(100, 9, pid | 1, 50);
    later.add(100, 9, pid | 2, 40);
    first.add(101, 9, pid | 1, 60);
    later.add(101, 9, pid | 2, 70);
    later.add(102, 9, pid | 3, 80);
    long h = LaunchCalls.find(first, later, 100, 9);
    assertThat(LaunchCalls.thread(first, later, h)).isEqualTo(pid | 2);
    assertThat(LaunchCalls.start(first, later, h)).isEqualTo(40);
    h = LaunchCalls.find(first, later, 101, 9);
    assertThat(LaunchCalls.thread(first, later, h)).isEqualTo(pid | 1);
    assertThat(LaunchCalls.start(first, later, h)).isEqualTo(60);
    h = LaunchCalls.find(first, later, 102, 9);
    assertThat(LaunchCalls.thread(first, later, h)).isEqualTo(pid | 3);
    assertThat(LaunchCalls.find(first, later, 103, 9)).isEqualTo(-1);
    assertThat(LaunchCalls.find(first, later, 100, 8)).isEqualTo(-1);
  }

  /** Feeds a {@link LaunchCalls} and a map the same calls and compares every lookup. */
  private static final class Model {
    final LaunchCalls calls = new LaunchCalls();
    final Map<Key, Call> expected = new HashMap<>();

    void add(long correlation, long globalTid, long start) {
      long process = globalTid >> 24;
      calls.add(correlation, process, globalTid, start);
      expected.merge(
          new Key(correlation, process),
          new Call(globalTid, start),
          (old, neu) -> neu.start() < old.start() ? neu : old);
    }

    void verify(Random random) {
      assertThat(calls.size()).isEqualTo(expected.size());
      for (Map.Entry<Key, Call> e : expected.entrySet()) {
        long h = LaunchCalls.find(calls, null, e.getKey().correlation(), e.getKey().process());
        assertThat(h).as("%s", e.getKey()).isNotNegative();
        assertThat(LaunchCalls.thread(calls, null, h))
            .as("%s", e.getKey())
            .isEqualTo(e.getValue().globalTid());
        assertThat(LaunchCalls.start(calls, null, h))
            .as("%s", e.getKey())
            .isEqualTo(e.getValue().start());
      }
      for (int i = 0; i < 10_000; i++) {
        Key k = new Key(random.nextLong(1L << 41) - 10, random.nextInt(400));
        if (!expected.containsKey(k)) {
          assertThat(LaunchCalls.find(calls, null, k.correlation(), k.process()))
              .as("%s", k)
              .isEqualTo(-1);
        }
      }
    }
  }
}
