package dev.llmlat.ebpf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Bad input and bad endings: clear exceptions, spans already read delivered, no process left
 * behind.
 */
class EbpfBridgeFailureTest {
  private static final Duration HANG_GUARD = Duration.ofSeconds(120);

  @Test
  void unknownPidIsNamed() {
    long pid = 4_000_000; // above the default pid_max: never a live process
    assertThatThrownBy(() -> EbpfBridge.start(BridgeOptions.builder().pid(pid).build(), b -> {}))
        .isInstanceOf(TargetProcessNotFoundException.class)
        .hasMessageContaining("no process with pid " + pid);
  }

  @Test
  void libraryWithoutTheSymbolsIsNamed() {
    Path libm = Path.of("/lib/x86_64-linux-gnu/libm.so.6");
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(libm), "no " + libm);
    assertThatThrownBy(
            () ->
                EbpfBridge.start(
                    BridgeOptions.builder().command("/bin/true").runtimeLibrary(libm).build(),
                    b -> {}))
        .isInstanceOfSatisfying(
            MissingProbeSymbolsException.class,
            e -> {
              assertThat(e.library().getFileName().toString()).startsWith("libm");
              assertThat(e.expected()).contains("cudaLaunchKernel");
            })
        .hasMessageContaining("exports none of the probed functions");
  }

  @Test
  void bpftraceDyingMidRunIsReportedAfterDeliveringWhatWasRead() throws Exception {
    TestTargets.assumeBpf();
    Path program = TestTargets.program();
    TestTargets.CollectingSink sink = new TestTargets.CollectingSink();
    // 1 thread, 100000 ranges of 1 launch, 2 ms apart: runs far longer than the test waits.
    BridgeOptions options =
        BridgeOptions.builder()
            .command(program + " steps 1 100000 1 2000")
            .commandOutput(Files.createTempFile(TestTargets.BUILD, "dying", ".out"))
            .nvtxInjection(TestTargets.injection())
            .reorderWindow(Duration.ofMillis(20))
            .batchSize(1)
            .build();
    EbpfBridge bridge = TestTargets.start(options, sink);
    try {
      long target = bridge.targetProcesses().getFirst().pid();
      sink.awaitSpans(3, HANG_GUARD);
      ProcessHandle bpftrace = bridge.bpftraceProcess();
      bpftrace.destroyForcibly(); // SIGKILL: bpftrace dies mid-run
      assertThatThrownBy(() -> bridge.awaitCompletion(Duration.ofSeconds(30)))
          .isInstanceOfSatisfying(
              BpftraceFailedException.class,
              e -> {
                assertThat(e.exitCode()).isEqualTo(137);
                assertThat(e.summary().spans())
                    .isEqualTo(sink.spans().size())
                    .isGreaterThanOrEqualTo(3);
              })
          .hasMessageContaining("bpftrace died mid-run with exit code 137");
      assertThat(sink.spans()).anyMatch(s -> s.getName().equals("step"));
      assertThat(TestTargets.gone(bpftrace.pid())).as("bpftrace reaped").isTrue();
      waitGone(target);
    } finally {
      bridge.close();
    }
  }

  @Test
  void closeEndsTheWholeProcessTree() throws Exception {
    TestTargets.assumeBpf();
    Path program = TestTargets.program();
    TestTargets.CollectingSink sink = new TestTargets.CollectingSink();
    BridgeOptions options =
        BridgeOptions.builder()
            .command(program + " steps 2 100000 2 2000")
            .commandOutput(Files.createTempFile(TestTargets.BUILD, "closing", ".out"))
            .nvtxInjection(TestTargets.injection())
            .reorderWindow(Duration.ofMillis(20))
            .batchSize(1)
            .build();
    EbpfBridge bridge = TestTargets.start(options, sink);
    long bpftrace = bridge.bpftraceProcess().pid();
    long target = bridge.targetProcesses().getFirst().pid();
    sink.awaitSpans(2, HANG_GUARD);
    bridge.close();
    BridgeSummary summary = bridge.stop(); // after close: the same summary, no exception
    assertThat(summary.spans()).isEqualTo(sink.spans().size()).isPositive();
    assertThat(summary.launches()).isPositive();
    assertThat(TestTargets.gone(bpftrace)).as("bpftrace reaped").isTrue();
    waitGone(target);
  }

  /**
   * Polls /proc until {@code pid} is gone (reaped: nothing tells a non-child's end sooner); the
   * deadline only guards against a hang.
   */
  private static void waitGone(long pid) throws InterruptedException {
    long deadline = System.nanoTime() + HANG_GUARD.toNanos();
    while (!TestTargets.gone(pid) && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(TestTargets.gone(pid))
        .as("target %d gone (not running, not a zombie)", pid)
        .isTrue();
  }
}
