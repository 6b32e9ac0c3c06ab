package dev.llmlat.engine;

/**
 * The scheduler's capacity, as vLLM names it: at most {@code maxNumSeqs} requests running, at most
 * {@code maxNumBatchedTokens} tokens computed per step (prefill tokens plus one per decode), and a
 * KV cache of {@code kvBlocks} blocks of {@code kvBlockSize} tokens, allocated a block at a time.
 *
 * @param maxNumSeqs most requests running at once ({@code --max-num-seqs})
 * @param maxNumBatchedTokens most tokens one step computes ({@code --max-num-batched-tokens})
 * @param kvBlockSize tokens per KV block ({@code --block-size})
 * @param kvBlocks KV blocks in the cache ({@code --num-gpu-blocks})
 */
public record SchedulerLimits(
    int maxNumSeqs, int maxNumBatchedTokens, int kvBlockSize, int kvBlocks) {
  /** vLLM keeps 1% of the blocks free when admitting, so running requests can grow. */
  private static final double WATERMARK = 0.01;

  public SchedulerLimits {
    require(
        maxNumSeqs >= 1 && maxNumSeqs <= 65_536,
        "--max-num-seqs must be 1..65536, got " + maxNumSeqs);
    require(
        maxNumBatchedTokens >= maxNumSeqs,
        "--max-num-batched-tokens "
            + maxNumBatchedTokens
            + " cannot fit one decode token per running request (--max-num-seqs "
            + maxNumSeqs
            + ")");
    require(
        kvBlockSize >= 1 && kvBlockSize <= 1024,
        "--block-size must be 1..1024 tokens, got " + kvBlockSize);
    require(kvBlocks >= 1, "--num-gpu-blocks must be at least 1, got " + kvBlocks);
    require(
        (long) kvBlocks * kvBlockSize >= 2,
        "the KV cache must hold at least 2 tokens, got " + kvBlocks + " block of " + kvBlockSize);
    require(
        (long) kvBlocks * kvBlockSize <= Integer.MAX_VALUE,
        "the KV cache of "
            + kvBlocks
            + " blocks of "
            + kvBlockSize
            + " tokens holds more than 2^31 tokens");
  }

  /** Blocks that hold {@code tokens} tokens. */
  public int blocksFor(long tokens) {
    return (int) ((tokens + kvBlockSize - 1) / kvBlockSize);
  }

  /** Tokens the whole cache holds. */
  public int kvTokens() {
    return kvBlocks * kvBlockSize;
  }

  /** Blocks admission leaves free while anything runs. */
  int watermarkBlocks() {
    return Math.max(1, (int) Math.ceil(kvBlocks * WATERMARK));
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
