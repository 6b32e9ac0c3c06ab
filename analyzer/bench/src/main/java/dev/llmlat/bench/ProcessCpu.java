package dev.llmlat.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * CPU time of a process so far, split into its JIT compiler threads and everything else, from
 * {@code /proc/PID/stat} and {@code /proc/PID/task/*} (a compiler thread that ends mid-way counts
 * as application time from then on). A short benchmark of a freshly started JVM charges seconds of
 * C2 compilation to whichever mode loaded more code; the split shows steady-state cost apart from
 * warm-up cost. Where {@code /proc} is missing, all time counts as application time.
 */
record ProcessCpu(long applicationNanos, long jitNanos) {
  private static final long NANOS_PER_TICK = 1_000_000_000L / clockTicksPerSecond();

  static ProcessCpu of(ProcessHandle process) {
    if (process == null) {
      return new ProcessCpu(0, 0);
    }
    Path tasks = Path.of("/proc", Long.toString(process.pid()), "task");
    if (!Files.isDirectory(tasks)) {
      return totalOnly(process);
    }
    long total;
    try {
      // The process's own counters include threads that have ended (pool threads come and go).
      total = cpuNanos(Path.of("/proc", Long.toString(process.pid()), "stat"));
    } catch (IOException | RuntimeException e) {
      return totalOnly(process);
    }
    long jit = 0;
    try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
      for (Path t : threads) {
        try {
          String name = Files.readString(t.resolve("comm")).strip();
          if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
            jit += cpuNanos(t.resolve("stat"));
          }
        } catch (IOException | RuntimeException e) {
          // the thread ended while being read: its time is gone from /proc either way
        }
      }
    } catch (IOException e) {
      return totalOnly(process);
    }
    return new ProcessCpu(Math.max(0, total - jit), jit);
  }

  /** Without {@code /proc}: the JDK's total, all counted as application time. */
  private static ProcessCpu totalOnly(ProcessHandle process) {
    return new ProcessCpu(process.info().totalCpuDuration().map(Duration::toNanos).orElse(0L), 0);
  }

  /** utime + stime of a {@code /proc} stat file (a process's or a thread's). */
  private static long cpuNanos(Path stat) throws IOException {
    String line = Files.readString(stat);
    // Fields after the parenthesised name: state is the 1st, utime the 12th, stime the 13th.
    String[] f = line.substring(line.lastIndexOf(')') + 2).split(" ");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * NANOS_PER_TICK;
  }

  ProcessCpu minus(ProcessCpu earlier) {
    return new ProcessCpu(applicationNanos - earlier.applicationNanos, jitNanos - earlier.jitNanos);
  }

  ProcessCpu plus(ProcessCpu other) {
    return new ProcessCpu(applicationNanos + other.applicationNanos, jitNanos + other.jitNanos);
  }

  private static long clockTicksPerSecond() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes()).strip();
      return p.waitFor() == 0 ? Long.parseLong(out) : 100;
    } catch (IOException | RuntimeException e) {
      return 100; // USER_HZ on every mainstream Linux build
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 100;
    }
  }
}
