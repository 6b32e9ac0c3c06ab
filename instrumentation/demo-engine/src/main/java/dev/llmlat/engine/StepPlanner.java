package dev.llmlat.engine;

import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses each step's work within the {@link SchedulerLimits}, moving requests between the waiting
 * queue and the running set: never more than {@code maxNumSeqs} running, never more than {@code
 * maxNumBatchedTokens} tokens in a step, never more KV blocks than the cache has.
 *
 * <ul>
 *   <li>Prefill-first (chunked prefill off, like the h200-tinylm capture and vLLM v0's default):
 *       when requests wait and there is room (a sequence slot, the token budget, KV blocks for the
 *       whole prompt), the step prefills them in arrival order and decodes nothing; otherwise it
 *       decodes every running request.
 *   <li>Chunked prefill (vLLM v1): decode tokens first, then unfinished prompts of running
 *       requests, then new requests, each chunk as large as the remaining budget and KV allow.
 * </ul>
 *
 * KV is allocated a block at a time: a request holding {@code t} tokens holds {@code ceil(t/block)}
 * blocks, and a decode needs a new block when its last one is full. When the cache cannot give
 * every decode its block, the most recently admitted running request is preempted (recompute: back
 * to the front of the queue, its blocks freed), as vLLM does.
 */
final class StepPlanner {
  private final SchedulerLimits limits;
  private final boolean chunked;

  StepPlanner(EngineConfig config) {
    this.limits = config.limits();
    this.chunked = config.chunkedPrefill();
  }

  StepPlan plan(Deque<EngineRequest> waiting, List<EngineRequest> running) {
    return chunked ? planChunked(waiting, running) : planPrefillFirst(waiting, running);
  }

  private StepPlan planPrefillFirst(Deque<EngineRequest> waiting, List<EngineRequest> running) {
    int used = blocksHeld(running);
    int tokens = 0;
    List<StepPlan.Chunk> prefills = new ArrayList<>();
    while (!waiting.isEmpty() && running.size() < limits.maxNumSeqs()) {
      EngineRequest next = waiting.peekFirst();
      int need = next.trace.prefillRemaining();
      int blocks = limits.blocksFor(need);
      if (tokens + need > limits.maxNumBatchedTokens()
          || !admissible(used, blocks, running.size())) {
        break; // first come, first served: nobody overtakes the head of the queue
      }
      waiting.pollFirst();
      running.add(next);
      prefills.add(new StepPlan.Chunk(next, need));
      used += blocks;
      tokens += need;
    }
    if (!prefills.isEmpty()) {
      return finish(prefills, List.of(), List.of(), waiting, running);
    }
    List<EngineRequest> preempted = new ArrayList<>();
    List<EngineRequest> decodes = decodable(running);
    makeRoomForDecodes(waiting, running, decodes, preempted, used);
    return finish(List.of(), decodes, preempted, waiting, running);
  }

  private StepPlan planChunked(Deque<EngineRequest> waiting, List<EngineRequest> running) {
    List<EngineRequest> preempted = new ArrayList<>();
    List<EngineRequest> decodes = decodable(running);
    int used = makeRoomForDecodes(waiting, running, decodes, preempted, blocksHeld(running));
    int growth = growth(decodes);
    int budget = limits.maxNumBatchedTokens() - decodes.size();
    int free = limits.kvBlocks() - used - growth;
    List<StepPlan.Chunk> prefills = new ArrayList<>();
    for (EngineRequest r : running) {
      if (budget <= 0) {
        break;
      }
      if (!decodes.contains(r) && r.trace.prefillRemaining() > 0) {
        int room = (limits.blocksFor(r.kvTokens) + free) * limits.kvBlockSize() - r.kvTokens;
        int chunk = Math.min(r.trace.prefillRemaining(), Math.min(budget, room));
        if (chunk > 0) {
          prefills.add(new StepPlan.Chunk(r, chunk));
          budget -= chunk;
          free -= limits.blocksFor(r.kvTokens + chunk) - limits.blocksFor(r.kvTokens);
        }
      }
    }
    // Admission reserves the whole prompt (committed), so a request is not evicted half-prefilled.
    // After a preemption admit nobody: the freed blocks would be taken back and the victim thrash.
    int committed = blocksCommitted(running) + growth;
    while (preempted.isEmpty()
        && !waiting.isEmpty()
        && running.size() < limits.maxNumSeqs()
        && budget > 0) {
      int need = waiting.peekFirst().trace.prefillRemaining();
      int blocks = limits.blocksFor(need);
      int chunk = Math.min(need, Math.min(budget, free * limits.kvBlockSize()));
      if (chunk <= 0 || !admissible(committed, blocks, running.size())) {
        break;
      }
      EngineRequest next = waiting.pollFirst();
      committed += blocks;
      running.add(next);
      prefills.add(new StepPlan.Chunk(next, chunk));
      budget -= chunk;
      free -= limits.blocksFor(chunk);
    }
    return finish(prefills, decodes, preempted, waiting, running);
  }

  /**
   * Preempts the youngest running requests until every decode gets its KV block; returns the blocks
   * held.
   */
  private int makeRoomForDecodes(
      Deque<EngineRequest> waiting,
      List<EngineRequest> running,
      List<EngineRequest> decodes,
      List<EngineRequest> preempted,
      int used) {
    while (!decodes.isEmpty() && used + growth(decodes) > limits.kvBlocks()) {
      EngineRequest victim = running.remove(running.size() - 1);
      decodes.remove(victim);
      used -= limits.blocksFor(victim.kvTokens);
      victim.kvTokens = 0;
      preempted.add(victim);
      waiting.addFirst(victim);
    }
    return used;
  }

  /**
   * A request fits when the cache holds its prompt's blocks and, while anything runs, still keeps
   * vLLM's watermark free: admitting into a cache that is full but for the prompt would preempt
   * someone at the very next decode step.
   */
  private boolean admissible(int usedBlocks, int needBlocks, int runningCount) {
    int watermark = runningCount == 0 ? 0 : limits.watermarkBlocks();
    return usedBlocks + needBlocks + watermark <= limits.kvBlocks();
  }

  /** The plan, with the scheduler's state once the step's tokens have their blocks. */
  private StepPlan finish(
      List<StepPlan.Chunk> prefills,
      List<EngineRequest> decodes,
      List<EngineRequest> preempted,
      Deque<EngineRequest> waiting,
      List<EngineRequest> running) {
    Map<EngineRequest, Integer> added = new IdentityHashMap<>();
    for (StepPlan.Chunk c : prefills) {
      added.merge(c.request(), c.tokens(), Integer::sum);
    }
    for (EngineRequest r : decodes) {
      added.merge(r, 1, Integer::sum);
    }
    int blocks = 0;
    for (EngineRequest r : running) {
      blocks += limits.blocksFor(r.kvTokens + added.getOrDefault(r, 0));
    }
    return new StepPlan(prefills, decodes, preempted, running.size(), waiting.size(), blocks);
  }

  /** New blocks the decodes need: one for each whose last block is full. */
  private int growth(List<EngineRequest> decodes) {
    int n = 0;
    for (EngineRequest r : decodes) {
      n += limits.blocksFor(r.kvTokens + 1) - limits.blocksFor(r.kvTokens);
    }
    return n;
  }

  private int blocksHeld(List<EngineRequest> running) {
    int blocks = 0;
    for (EngineRequest r : running) {
      blocks += limits.blocksFor(r.kvTokens);
    }
    return blocks;
  }

  /**
   * Blocks held plus the blocks the prompt tokens still to prefill will take, over the running
   * requests.
   */
  private int blocksCommitted(List<EngineRequest> running) {
    int blocks = 0;
    for (EngineRequest r : running) {
      blocks += limits.blocksFor(r.kvTokens + r.trace.prefillRemaining());
    }
    return blocks;
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
}
