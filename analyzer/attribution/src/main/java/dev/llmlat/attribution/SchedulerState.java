package dev.llmlat.attribution;

import dev.llmlat.semconv.LlmlatAttributes;

/**
 * The scheduler's state when a step was scheduled, as the step span reports it (-1 where it does
 * not): what can keep a waiting request out of the batch.
 */
record SchedulerState(
    long running,
    long waiting,
    long kvBlocksUsed,
    long kvBlocksTotal,
    long tokenBudget,
    long maxSeqs,
    long scheduledTokens) {
  /**
   * A KV cache this full admits no new prompt (block-granular allocation leaves the rest unusable).
   */
  static final double KV_FULL = 0.9;

  static final SchedulerState UNKNOWN = new SchedulerState(-1, -1, -1, -1, -1, -1, -1);

  static SchedulerState of(SpanRecord step) {
    long prefill = step.longAttr(LlmlatAttributes.STEP_PREFILL_TOKENS, -1);
    long decode = step.longAttr(LlmlatAttributes.STEP_DECODE_TOKENS, -1);
    return new SchedulerState(
        step.longAttr(LlmlatAttributes.SCHEDULER_RUNNING, -1),
        step.longAttr(LlmlatAttributes.SCHEDULER_WAITING, -1),
        step.longAttr(LlmlatAttributes.SCHEDULER_KV_BLOCKS_USED, -1),
        step.longAttr(LlmlatAttributes.SCHEDULER_KV_BLOCKS_TOTAL, -1),
        step.longAttr(LlmlatAttributes.SCHEDULER_TOKEN_BUDGET, -1),
        step.longAttr(LlmlatAttributes.SCHEDULER_MAX_SEQS, -1),
        prefill < 0 && decode < 0 ? -1 : Math.max(0, prefill) + Math.max(0, decode));
  }

  /**
   * The kind of limit that binds ("kv", "max_seqs", "token_budget"), or "" when none does or
   * nothing is known.
   */
  String binding() {
    if (kvBlocksTotal > 0 && kvBlocksUsed >= 0 && kvBlocksUsed >= KV_FULL * kvBlocksTotal) {
      return "kv";
    }
    if (maxSeqs > 0 && running >= maxSeqs) {
      return "max_seqs";
    }
    if (tokenBudget > 0 && scheduledTokens >= tokenBudget) {
      return "token_budget";
    }
    return "";
  }

  /**
   * The binding limit in words: "KV cache 97% full", "batch at max_num_seqs 256", "token budget
   * 8192 reached".
   */
  String describe(String binding) {
    return switch (binding) {
      case "kv" ->
          String.format("KV cache %d%% full", Math.round(100.0 * kvBlocksUsed / kvBlocksTotal));
      case "max_seqs" -> "batch at max_num_seqs " + maxSeqs;
      case "token_budget" -> "token budget " + tokenBudget + " reached";
      default -> "";
    };
  }
}
