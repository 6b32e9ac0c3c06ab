package dev.llmlat.ebpf;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanSink;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Builds the CUDA test program and the NVTX injection library into target/, and checks BPF is
 * usable.
 */
final class TestTargets {
  static final Path MODULE = Path.of(System.getProperty("llmlat.moduleDir", "."));
  static final Path BUILD = Path.of(System.getProperty("llmlat.buildDir", "target"));
  static final Path NVCC = Path.of("/usr/local/cuda/bin/nvcc");
  private static Path program;
  private static Path injection;
  private static String bpfProblem;
  private static boolean bpfChecked;

  private TestTargets() {}

  /** The launch_loop program (src/test/cuda), linked against the shared libcudart. */
  static synchronized Path program() throws Exception {
    if (program == null) {
      assumeTrue(
          Files.isExecutable(NVCC),
          "no CUDA toolkit at " + NVCC + ": cannot build the test program");
      Path src = MODULE.resolve("src/test/cuda/launch_loop.cu");
      Path out = BUILD.resolve("cuda/launch_loop");
      Files.createDirectories(out.getParent());
      if (!Files.isExecutable(out)
          || Files.getLastModifiedTime(out).compareTo(Files.getLastModifiedTime(src)) < 0) {
        run(
            List.of(
                NVCC.toString(),
                "-cudart",
                "shared",
                "-O2",
                "-o",
                out.toString(),
                src.toString(),
                "-ldl"),
            300);
      }
      program = out;
    }
    return program;
  }

  static synchronized Path injection() {
    if (injection == null) {
      injection = NvtxInjection.build(BUILD.resolve("nvtx"));
    }
    return injection;
  }

  /**
   * Skips the test (JUnit assumption) when bpftrace cannot be installed or the kernel refuses BPF.
   */
  static synchronized void assumeBpf() throws Exception {
    if (!bpfChecked) {
      bpfChecked = true;
      String install = run(List.of(MODULE.resolve("scripts/install-bpftrace").toString()), 600);
      if (install.startsWith("FAILED")) {
        bpfProblem = "bpftrace cannot be installed: " + install;
      } else {
        // The smallest real program load; a refused uprobe shows later as BpfUnavailableException.
        String probe = run(List.of("bpftrace", "-e", "BEGIN { printf(\"ok\\n\"); exit(); }"), 60);
        if (!probe.contains("ok")) {
          bpfProblem = "the kernel refused a BPF uprobe program: " + probe;
        }
      }
    }
    assumeTrue(bpfProblem == null, bpfProblem);
  }

  /** Starts a bridge, or skips the test when the kernel refuses the probes. */
  static EbpfBridge start(BridgeOptions options, SpanSink sink) {
    try {
      return EbpfBridge.start(options, sink);
    } catch (BpfUnavailableException e) {
      assumeTrue(false, "BPF refused here: " + e.getMessage());
      throw e;
    }
  }

  static com.fasterxml.jackson.databind.JsonNode json(String line) {
    try {
      return new com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
    } catch (IOException e) {
      throw new IllegalArgumentException("not JSON: " + line, e);
    }
  }

  static String run(List<String> cmd, int timeoutS) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return "FAILED (timeout): " + out;
    }
    return p.exitValue() == 0 ? out : "FAILED (exit " + p.exitValue() + "): " + out;
  }

  /** Collects everything a bridge delivers. */
  static final class CollectingSink implements SpanSink {
    final List<ExportTraceServiceRequest> batches = new CopyOnWriteArrayList<>();

    @Override
    public synchronized void accept(SpanBatch batch) {
      batches.addAll(batch.requests());
      notifyAll();
    }

    /**
     * Waits until {@code n} spans have arrived; the timeout only guards against a hang (then it
     * fails).
     */
    synchronized void awaitSpans(int n, Duration hangGuard) throws InterruptedException {
      long deadline = System.nanoTime() + hangGuard.toNanos();
      for (long left = hangGuard.toMillis();
          spans().size() < n;
          left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())) {
        if (left <= 0) {
          throw new AssertionError(
              "timed out after "
                  + hangGuard.toSeconds()
                  + " s waiting for "
                  + n
                  + " spans; "
                  + spans().size()
                  + " arrived");
        }
        wait(left);
      }
    }

    List<Span> spans() {
      List<Span> out = new ArrayList<>();
      for (ExportTraceServiceRequest b : batches) {
        for (ResourceSpans rs : b.getResourceSpansList()) {
          for (ScopeSpans ss : rs.getScopeSpansList()) {
            out.addAll(ss.getSpansList());
          }
        }
      }
      return out;
    }
  }

  static boolean gone(long pid) {
    // Gone, not a zombie: /proc/PID disappears only once the process was reaped.
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return stat.isEmpty();
    } catch (IOException e) {
      return true;
    }
  }
}
