package dev.llmlat.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.llmlat.sharedtraces.SharedTraces;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class CostModelFitTest {
  private static final Path TRACES = SharedTraces.resolve("h200-tinylm");

  @Test
  void refittingTheH200CaptureGivesTheShippedCoefficients() throws Exception {
    Path capture = TRACES.resolve("unprofiled/b");
    assertThat(Files.isRegularFile(capture.resolve("cuda_events.jsonl")))
        .as("capture at " + capture)
        .isTrue();
    CostModelFit.Result fit = CostModelFit.fit(capture);
    StepCostModel shipped = StepCostModel.H200_TINYLM;
    assertThat(fit.prefill().points()).isEqualTo(8);
    assertThat(fit.decode().points()).isEqualTo(42);
    assertThat(fit.model().prefillBaseMs()).isCloseTo(shipped.prefillBaseMs(), within(1e-5));
    assertThat(fit.model().prefillMsPerToken())
        .isCloseTo(shipped.prefillMsPerToken(), within(1e-9));
    assertThat(fit.model().decodeBaseMs()).isCloseTo(shipped.decodeBaseMs(), within(1e-5));
    assertThat(fit.model().decodeMsPerRequest())
        .isCloseTo(shipped.decodeMsPerRequest(), within(1e-8));
    assertThat(fit.decode().rSquared()).isGreaterThan(0.95);
  }

  @Test
  void modelPredictsTheCapturedDecodeStepsAndPrefillMean() throws Exception {
    List<CostModelFit.CapturedStep> steps = CostModelFit.read(TRACES.resolve("unprofiled/b"));
    StepCostModel model = StepCostModel.H200_TINYLM;
    double prefillSum = 0;
    int prefills = 0;
    for (CostModelFit.CapturedStep s : steps) {
      if (s.kind().equals("prefill")) {
        prefillSum += s.gpuElapsedMs();
        prefills++;
      }
    }
    assertThat(model.stepNanos(1024, 0) / 1e6).isCloseTo(prefillSum / prefills, within(1e-3));
    // The 8-request decode steps took 542 and 614 ms on the H200.
    assertThat(model.stepNanos(0, 8) / 1e6).isBetween(540.0, 620.0);
    assertThat(model.stepNanos(0, 1) / 1e6).isBetween(66.0, 78.0);
    assertThat(model.stepNanos(512, 3)).isEqualTo(model.stepNanos(512, 0) + model.stepNanos(0, 3));
  }

  @Test
  void nonNegativeFitFallsBackToTheBoundary() {
    // Falling line: the unconstrained slope is negative, the constrained fit is the mean.
    CostModelFit.Line falling =
        CostModelFit.nonNegativeLeastSquares(
            List.of(new double[] {1, 10}, new double[] {2, 8}, new double[] {3, 6}));
    assertThat(falling.slope()).isZero();
    assertThat(falling.intercept()).isCloseTo(8, within(1e-12));
    // Exact line y = 2 + 3x is recovered.
    CostModelFit.Line exact =
        CostModelFit.nonNegativeLeastSquares(
            List.of(new double[] {0, 2}, new double[] {1, 5}, new double[] {4, 14}));
    assertThat(exact.intercept()).isCloseTo(2, within(1e-9));
    assertThat(exact.slope()).isCloseTo(3, within(1e-9));
    assertThat(exact.rSquared()).isCloseTo(1, within(1e-12));
  }
}
