package dev.llmlat.engine;

import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Chooses each step's work, moving requests between the waiting queue and the running set.
 *
 * <ul>
 *   <li>Prefill-first (chunked prefill off, like the h200-tinylm capture and vLLM v0's default):
 *       when requests wait and there is room (batch slots, KV for their whole prompt), the step
 *       prefills them and decodes nothing; otherwise it decodes every running request.
 *   <li>Chunked prefill (a token budget per step, like vLLM v1): decode tokens first, then
 *       unfinished prompts of running requests, then new requests, each chunk as large as the
 *       remaining budget and KV allow.
 * </ul>
 *
 * Before decoding, each running request needs one more KV slot; when the cache cannot hold them,
 * the most recently admitted running request is preempted (recompute: back to the front of the
 * queue, its KV freed), as vLLM does.
 */
final class StepPlanner {
  private final int maxBatch;
  private final int chunkBudget;
  private final int kvCapacity;

  StepPlanner(EngineConfig config) {
    this.maxBatch = config.maxBatch();
    this.chunkBudget = config.chunkedPrefillBudget();
    this.kvCapacity = config.kvCacheTokens();
  }

  StepPlan plan(Deque<EngineRequest> waiting, List<EngineRequest> running) {
    return chunkBudget > 0 ? planChunked(waiting, running) : planPrefillFirst(waiting, running);
  }

  private StepPlan planPrefillFirst(Deque<EngineRequest> waiting, List<EngineRequest> running) {
    int used = kvUsed(running);
    List<StepPlan.Chunk> prefills = new ArrayList<>();
    while (!waiting.isEmpty() && running.size() < maxBatch) {
      EngineRequest next = waiting.peekFirst();
      int need = next.trace.prefillRemaining();
      if (!admissible(used, need, running.size())) {
        break;
      }
      waiting.pollFirst();
      running.add(next);
      prefills.add(new StepPlan.Chunk(next, need));
      used += need;
    }
    if (!prefills.isEmpty()) {
      return new StepPlan(prefills, List.of(), List.of());
    }
    List<EngineRequest> preempted = new ArrayList<>();
    List<EngineRequest> decodes = decodable(running);
    makeRoomForDecodes(waiting, running, decodes, preempted, used);
    return new StepPlan(List.of(), decodes, preempted);
  }

  private StepPlan planChunked(Deque<EngineRequest> waiting, List<EngineRequest> running) {
    int used = kvUsed(running);
    List<EngineRequest> preempted = new ArrayList<>();
    List<EngineRequest> decodes = decodable(running);
    used = makeRoomForDecodes(waiting, running, decodes, preempted, used);
    int budget = chunkBudget - decodes.size();
    int free = kvCapacity - used - decodes.size();
    List<StepPlan.Chunk> prefills = new ArrayList<>();
    for (EngineRequest r : running) {
      if (budget <= 0 || free <= 0) {
        break;
      }
      if (!decodes.contains(r) && r.trace.prefillRemaining() > 0) {
        int chunk = Math.min(r.trace.prefillRemaining(), Math.min(budget, free));
        prefills.add(new StepPlan.Chunk(r, chunk));
        budget -= chunk;
        free -= chunk;
      }
    }
    // Admission reserves the whole prompt (committed), so a request is not evicted half-prefilled.
    // After a preemption admit nobody: the freed KV would be taken back and the victim thrash.
    int committed = kvCommitted(running);
    while (preempted.isEmpty() && !waiting.isEmpty() && running.size() < maxBatch && budget > 0 && free > 0) {
      int need = waiting.peekFirst().trace.prefillRemaining();
      if (!admissible(committed + decodes.size(), need, running.size())) {
        break;
      }
      EngineRequest next = waiting.pollFirst();
      committed += need;
      int chunk = Math.min(need, Math.min(budget, free));
      running.add(next);
      prefills.add(new StepPlan.Chunk(next, chunk));
      budget -= chunk;
      free -= chunk;
    }
    return new StepPlan(prefills, decodes, preempted);
  }

  /** Preempts the youngest running requests until every decode gets a KV slot; returns KV used. */
  private int makeRoomForDecodes(Deque<EngineRequest> waiting, List<EngineRequest> running,
      List<EngineRequest> decodes, List<EngineRequest> preempted, int used) {
    while (!decodes.isEmpty() && used + decodes.size() > kvCapacity) {
      EngineRequest victim = running.remove(running.size() - 1);
      decodes.remove(victim);
      used -= victim.kvTokens;
      victim.kvTokens = 0;
      preempted.add(victim);
      waiting.addFirst(victim);
    }
    return used;
  }

  /**
   * A request fits when the cache holds its prompt plus one token of growth for every running
   * request (a watermark, as vLLM keeps): admitting into a cache that is full but for the prompt
   * would preempt someone at the very next decode step.
   */
  private boolean admissible(int used, int need, int runningCount) {
    int watermark = runningCount == 0 ? 0 : runningCount + 1;
    return used + need + watermark <= kvCapacity;
  }

  /** KV held plus prompt tokens still to prefill, over the running requests. */
  private static int kvCommitted(List<EngineRequest> running) {
    int committed = 0;
    for (EngineRequest r : running) {
      committed += r.kvTokens + r.trace.prefillRemaining();
    }
    return committed;
  }

  private static List<EngineRequest> decodable(List<EngineRequest> running) {
    List<EngineRequest> decodes = new ArrayList<>();
    for (EngineRequest r : running) {
      if (r.decodable()) {
        decodes.add(r);
      }
    }
    return decodes;
  }

  private static int kvUsed(List<EngineRequest> running) {
    int used = 0;
    for (EngineRequest r : running) {
      used += r.kvTokens;
    }
    return used;
  }
}
