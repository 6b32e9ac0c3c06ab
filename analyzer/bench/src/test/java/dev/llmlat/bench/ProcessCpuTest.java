package dev.llmlat.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProcessCpuTest {
  @Test
  void countsCpuThatThisProcessBurns() {
    // spin until this thread has burned 300 ms of CPU by its own clock, however busy the machine is
    java.lang.management.ThreadMXBean threads =
        java.lang.management.ManagementFactory.getThreadMXBean();
    ProcessCpu before = ProcessCpu.of(ProcessHandle.current());
    long threadStart = threads.getCurrentThreadCpuTime();
    long x = 0;
    while (threads.getCurrentThreadCpuTime() - threadStart < 300_000_000L) {
      x += Long.numberOfTrailingZeros(x + System.nanoTime());
    }
    long burned = threads.getCurrentThreadCpuTime() - threadStart;
    ProcessCpu spent = ProcessCpu.of(ProcessHandle.current()).minus(before);
    // the process's application time holds this thread's (less two clock ticks of /proc rounding)
    assertThat(spent.applicationNanos())
        .as("spin result %d", x)
        .isGreaterThan(burned - 20_000_000L);
    assertThat(spent.jitNanos()).isGreaterThanOrEqualTo(0);
  }

  @Test
  void anUnknownProcessCostsNothing() {
    assertThat(ProcessCpu.of(null)).isEqualTo(new ProcessCpu(0, 0));
  }
}
