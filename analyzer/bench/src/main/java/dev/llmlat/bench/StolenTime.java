package dev.llmlat.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The share of the machine's CPU time the hypervisor gave to other guests ("steal" in {@code
 * /proc/stat}) between two samples. On a shared VM it comes in bursts that slow every process at
 * once and have nothing to do with the code measured; a benchmark can set aside the intervals they
 * hit. Where {@code /proc/stat} is missing, no time is stolen.
 */
record StolenTime(long stolenTicks, long totalTicks) {
  private static final Path STAT = Path.of("/proc/stat");

  /** The machine's counters now. */
  static StolenTime sample() {
    try {
      return parse(Files.readAllLines(STAT).get(0));
    } catch (IOException | RuntimeException e) {
      return new StolenTime(0, 0);
    }
  }

  /** The aggregate {@code cpu} line: user nice system idle iowait irq softirq steal ... */
  static StolenTime parse(String cpuLine) {
    String[] f = cpuLine.trim().split("\\s+");
    if (!f[0].equals("cpu") || f.length < 9) {
      throw new IllegalArgumentException("not the aggregate cpu line of /proc/stat: " + cpuLine);
    }
    long total = 0;
    for (int i = 1; i < Math.min(f.length, 9); i++) { // guest time is already in user and nice
      total += Long.parseLong(f[i]);
    }
    return new StolenTime(Long.parseLong(f[8]), total);
  }

  /** The stolen share of the time from {@code earlier} to this sample, 0 when none passed. */
  double shareSince(StolenTime earlier) {
    long total = totalTicks - earlier.totalTicks;
    return total <= 0 ? 0 : (double) (stolenTicks - earlier.stolenTicks) / total;
  }
}
