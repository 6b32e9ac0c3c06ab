package dev.llmlat.semconv;

/**
 * The span names llmlat's own layers write and the analyzer keys on. The engine request span is
 * named as vLLM names it, so vLLM's spans and the scheduler SDK's read the same; other engines'
 * names live in the analyzer's adapters, which read those engines as they are.
 */
public final class LlmlatSpanNames {
  /** The engine's request span (kind SERVER), vLLM's name. */
  public static final String REQUEST = "llm_request";

  /** Waiting in the scheduler's queue (one per wait: re-queues after preemption are spans too). */
  public static final String QUEUE = "queue";

  /** One prefill chunk of a request. */
  public static final String PREFILL = "prefill";

  /** A request's decode phase, token times in {@link LlmlatAttributes#DECODE_TOKEN_DELTAS_NS}. */
  public static final String DECODE = "decode";

  /** One engine step (a batch's forward pass), engine layer and GPU layer alike. */
  public static final String STEP = "step";

  /**
   * A request's KV cache sent to another instance (GPU layer, disaggregated prefill/decode): the
   * range, its kernels as children.
   */
  public static final String KV_SEND = "llmlat.kv_send";

  /** A request's KV cache received from another instance (GPU layer). */
  public static final String KV_RECV = "llmlat.kv_recv";

  private LlmlatSpanNames() {}
}
