package dev.llmlat.load;

import java.util.List;

/**
 * What a run did: every measured request that ended (in the order they were sent), when the
 * measured phase began and how long it lasted, and the warm-up.
 *
 * @param config what it was asked to do
 * @param prompts where the prompts came from, in words
 * @param outcomes the measured requests, by index; ones stopped in flight are {@link
 *     Failure.Kind#CANCELLED}
 * @param phaseStartNanos the measured phase's start ({@link System#nanoTime()})
 * @param durationNanos from the phase's start to the end of its last request (vLLM's benchmark
 *     duration)
 * @param stopped whether {@link LoadRun#stop} ended it before it was done
 * @param warmups warm-up requests sent
 * @param warmupFailures of which failed
 * @param warmupFailure the first warm-up failure, or null
 * @param clock turns the outcomes' readings into Unix time
 */
public record LoadResult(
    LoadConfig config,
    String prompts,
    List<RequestOutcome> outcomes,
    long phaseStartNanos,
    long durationNanos,
    boolean stopped,
    int warmups,
    int warmupFailures,
    Failure warmupFailure,
    WallClock clock) {
  public LoadResult {
    outcomes = List.copyOf(outcomes);
  }

  /** The measured requests' failures of {@code kind}, in the order sent. */
  public List<Failure> failures(Failure.Kind kind) {
    return outcomes.stream()
        .map(RequestOutcome::failure)
        .filter(f -> f != null && f.kind() == kind)
        .toList();
  }

  /**
   * True when every warm-up request failed: the server is not answering as asked, and no measured
   * request was sent.
   */
  public boolean warmupFailed() {
    return warmups > 0 && warmupFailures == warmups;
  }
}
