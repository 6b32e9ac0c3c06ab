package dev.llmlat.nvtx;

import java.util.List;

/**
 * What a range's text says about the engine step it brackets, or about the KV-cache transfer of one
 * request ({@link #isKvTransfer()}).
 *
 * @param kind {@code prefill | decode | mixed | kv_send | kv_recv}, or {@code null} when the format
 *     does not say
 * @param stepSpanId the engine step span id (16 lowercase hex), or {@code null} when the text does
 *     not name it
 * @param traceIds the request trace ids served (32 lowercase hex each), in the order written, never
 *     empty
 */
public record RangeMatch(String kind, String stepSpanId, List<String> traceIds) {
  /** The kind of a range that sends a request's KV cache to another instance. */
  public static final String KV_SEND = "kv_send";

  /** The kind of a range that receives a request's KV cache from another instance. */
  public static final String KV_RECV = "kv_recv";

  public RangeMatch {
    traceIds = List.copyOf(traceIds);
    if (traceIds.isEmpty()) {
      throw new IllegalArgumentException("a step serves at least one trace");
    }
  }

  /**
   * Whether the range moves a request's KV cache ({@link #KV_SEND}, {@link #KV_RECV}) rather than
   * running a step.
   */
  public boolean isKvTransfer() {
    return KV_SEND.equals(kind) || KV_RECV.equals(kind);
  }
}
