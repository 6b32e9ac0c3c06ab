package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProcessCpuTest {
  @Test
  void countsCpuThatThisProcessBurns() {
    ProcessCpu before = ProcessCpu.of(ProcessHandle.current());
    long until = System.nanoTime() + 400_000_000L;
    long x = 0;
    while (System.nanoTime() < until) {
      x += Long.numberOfTrailingZeros(x + System.nanoTime());
    }
    ProcessCpu spent = ProcessCpu.of(ProcessHandle.current()).minus(before);
    // At least half of the 400 ms spin shows up (the machine may be busy), and as application time.
    assertThat(spent.applicationNanos()).as("spin result %d", x).isGreaterThan(200_000_000L);
    assertThat(spent.jitNanos()).isGreaterThanOrEqualTo(0);
  }

  @Test
  void anUnknownProcessCostsNothing() {
    assertThat(ProcessCpu.of(null)).isEqualTo(new ProcessCpu(0, 0));
  }
}
