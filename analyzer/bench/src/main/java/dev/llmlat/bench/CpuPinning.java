package dev.llmlat.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Splits this process's CPUs between a process under measurement and everything else (load
 * generator, upstream, broker, receivers), through {@code taskset}. In production a gateway has
 * cores of its own and the broker or collector it exports to runs elsewhere; on a small machine the
 * bench would otherwise charge the broker's work to the gateway's latency, at random.
 */
public record CpuPinning(String measured, String others) {
  /**
   * The upper half of the CPUs this process may run on for the measured process, the rest for the
   * others; empty when there are fewer than two or {@code taskset} is missing.
   */
  public static Optional<CpuPinning> halves() throws IOException {
    List<Integer> cpus = allowedCpus();
    if (cpus.size() < 2 || !tasksetWorks()) {
      return Optional.empty();
    }
    int half = cpus.size() / 2;
    return Optional.of(
        new CpuPinning(join(cpus.subList(half, cpus.size())), join(cpus.subList(0, half))));
  }

  /**
   * Parses a CPU list as {@code taskset -c} takes it ("1", "2-3", "0,2"), checking it is allowed.
   */
  public static CpuPinning of(String measured) throws IOException {
    List<Integer> allowed = allowedCpus();
    List<Integer> chosen = parse(measured);
    if (!allowed.containsAll(chosen)) {
      throw new IllegalArgumentException(
          "--gateway-cpus " + measured + ": this process may only use CPUs " + join(allowed));
    }
    List<Integer> rest = new ArrayList<>(allowed);
    rest.removeAll(chosen);
    if (rest.isEmpty()) {
      throw new IllegalArgumentException(
          "--gateway-cpus " + measured + " leaves no CPU for the load generator and broker");
    }
    if (!tasksetWorks()) {
      throw new IllegalArgumentException(
          "--gateway-cpus needs taskset (util-linux), which is missing or refused");
    }
    return new CpuPinning(join(chosen), join(rest));
  }

  /** The command prefix that starts a process on the measured CPUs. */
  public List<String> measuredLauncher() {
    return List.of("taskset", "-c", measured);
  }

  /** Moves every thread of this JVM (and so the children it starts later) to the other CPUs. */
  public void pinSelfToOthers() throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(
                "taskset", "-a", "-p", "-c", others, Long.toString(ProcessHandle.current().pid()))
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IOException(
          "taskset could not pin the benchmark to CPUs " + others + ": " + out.strip());
    }
  }

  static List<Integer> allowedCpus() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("Cpus_allowed_list:")) {
        return parse(line.substring(line.indexOf(':') + 1).strip());
      }
    }
    throw new IOException("/proc/self/status has no Cpus_allowed_list");
  }

  static List<Integer> parse(String list) {
    List<Integer> cpus = new ArrayList<>();
    for (String part : list.split(",")) {
      String p = part.strip();
      try {
        int dash = p.indexOf('-');
        int lo = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
        int hi = dash < 0 ? lo : Integer.parseInt(p.substring(dash + 1));
        if (lo < 0 || hi < lo) {
          throw new NumberFormatException();
        }
        for (int c = lo; c <= hi; c++) {
          cpus.add(c);
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("not a CPU list (like 1 or 2-3 or 0,2): " + list);
      }
    }
    return cpus;
  }

  private static String join(List<Integer> cpus) {
    StringBuilder b = new StringBuilder();
    for (int c : cpus) {
      b.append(b.length() == 0 ? "" : ",").append(c);
    }
    return b.toString();
  }

  private static boolean tasksetWorks() {
    try {
      Process p =
          new ProcessBuilder("taskset", "-p", Long.toString(ProcessHandle.current().pid()))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
