package dev.llmlat.engine;

import java.util.List;

/** What the next step computes, and whom the planner preempted to make room for it. */
record StepPlan(List<Chunk> prefills, List<EngineRequest> decodes, List<EngineRequest> preempted) {
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
}
