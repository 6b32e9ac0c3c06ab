package dev.llmlat.engine;

import java.util.List;

/**
 * What the next step computes, whom the planner preempted to make room for it, and the scheduler's
 * state once it is planned: requests running and waiting, and the KV blocks allocated with the
 * step's tokens.
 */
record StepPlan(
    List<Chunk> prefills,
    List<EngineRequest> decodes,
    List<EngineRequest> preempted,
    int running,
    int waiting,
    int kvBlocksUsed) {
  /** {@code tokens} prompt tokens of {@code request}. */
  record Chunk(EngineRequest request, int tokens) {}

  boolean isEmpty() {
    return prefills.isEmpty() && decodes.isEmpty();
  }

  int prefillTokens() {
    int sum = 0;
    for (Chunk c : prefills) {
      sum += c.tokens();
    }
    return sum;
  }

  /** Tokens the step computes: its prefill tokens and one per decode. */
  int scheduledTokens() {
    return prefillTokens() + decodes.size();
  }
}
