package dev.llmlat.ebpf;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Probe cost: launches/s of a tight cudaLaunchKernel loop in one process, first unprobed, then with
 * the bridge attached by pid. Run: {@code mvn -pl ebpf-bridge verify -Dtest=ProbeCostBenchmark
 * -Dllmlat.bench=true [-Dllmlat.bench.launches=200000]}.
 */
@EnabledIfSystemProperty(named = "llmlat.bench", matches = "true")
class ProbeCostBenchmark {

  @Test
  void launchesPerSecondWithAndWithoutProbes() throws Exception {
    TestTargets.assumeBpf();
    Path program = TestTargets.program();
    long n = Long.getLong("llmlat.bench.launches", 200_000);
    ProcessBuilder pb = new ProcessBuilder(program.toString(), "bench", Long.toString(n));
    pb.environment().put(NvtxInjection.ENV, TestTargets.injection().toString());
    Process target = pb.redirectErrorStream(true).start();
    try (BufferedReader out =
            new BufferedReader(
                new InputStreamReader(target.getInputStream(), StandardCharsets.UTF_8));
        OutputStream in = target.getOutputStream()) {
      JsonNode phase1 = TestTargets.json(out.readLine());
      TestTargets.json(out.readLine()); // ready: waiting for the probes
      TestTargets.CollectingSink sink = new TestTargets.CollectingSink();
      try (EbpfBridge bridge =
          TestTargets.start(BridgeOptions.builder().pid(target.pid()).build(), sink)) {
        in.write("go\n".getBytes(StandardCharsets.UTF_8));
        in.flush();
        JsonNode phase2 = TestTargets.json(out.readLine());
        BridgeSummary summary = bridge.awaitCompletion(Duration.ofMinutes(5));
        double r1 = phase1.get("launches_per_s").asDouble();
        double r2 = phase2.get("launches_per_s").asDouble();
        double overheadUs = (1 / r2 - 1 / r1) * 1e6;
        System.out.printf(
            "probe cost: %d launches; unprobed %.0f launches/s (%.3f us/launch); probed %.0f launches/s"
                + " (%.3f us/launch); overhead %.3f us per launch; bridge saw %s%n",
            n, r1, 1e6 / r1, r2, 1e6 / r2, overheadUs, summary.describe());
        assertThat(summary.launches()).isPositive();
      }
    } finally {
      target.destroyForcibly();
      target.waitFor();
    }
  }
}
