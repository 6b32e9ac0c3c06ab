package dev.llmlat.engine;

/**
 * How long one engine step takes on the modelled GPU: prefill work costs {@code prefillBaseMs +
 * prefillMsPerToken·tokens}, decode work {@code decodeBaseMs + decodeMsPerRequest·requests}; a
 * mixed (chunked-prefill) step pays both, as it runs both kinds of kernels (the captures hold no
 * mixed steps to fit that on).
 */
public record StepCostModel(
    double prefillBaseMs,
    double prefillMsPerToken,
    double decodeBaseMs,
    double decodeMsPerRequest) {
  /**
   * Fitted to the unprofiled H200 run {@code shared/traces/h200-tinylm/unprofiled/b} (8 prefill, 42
   * decode steps; cudaEvent elapsed time per step) by {@code java -cp <demo-engine classpath>
   * dev.llmlat.engine.CostModelFit ../shared/traces/h200-tinylm/unprofiled/b} (non-negative least
   * squares; CostModelFitTest refits and compares), which printed {@code prefill ms = 77.711124 + 0
   * * tokens (8 steps)} and {@code decode ms = 0 + 71.355614094 * batch (42 steps, R^2 0.977)}. On
   * that host a prefill step is launch-bound: 48 to 4096 prompt tokens all took 57-99 ms and the
   * unconstrained slope is negative, so the fit is flat (slope 0, base = mean); a decode step costs
   * about 71 ms per request in the batch with no fixed part (the unconstrained base is -2 ms).
   */
  public static final StepCostModel H200_TINYLM =
      new StepCostModel(77.711124, 0.0, 0.0, 71.355614094);

  public StepCostModel {
    if (!(prefillBaseMs >= 0)
        || !(prefillMsPerToken >= 0)
        || !(decodeBaseMs >= 0)
        || !(decodeMsPerRequest >= 0)) {
      throw new IllegalArgumentException(
          "cost model coefficients must be finite and non-negative: "
              + prefillBaseMs
              + ", "
              + prefillMsPerToken
              + ", "
              + decodeBaseMs
              + ", "
              + decodeMsPerRequest);
    }
  }

  /**
   * Modelled duration (ns, unscaled) of a step prefilling {@code prefillTokens} and decoding {@code
   * decodeRequests}.
   */
  public long stepNanos(int prefillTokens, int decodeRequests) {
    double ms = 0;
    if (prefillTokens > 0) {
      ms += prefillBaseMs + prefillMsPerToken * prefillTokens;
    }
    if (decodeRequests > 0) {
      ms += decodeBaseMs + decodeMsPerRequest * decodeRequests;
    }
    return Math.round(ms * 1_000_000.0);
  }
}
