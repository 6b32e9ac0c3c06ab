package dev.llmlat.gpu.internal;

import com.google.protobuf.ByteString;

/**
 * The (trace id, span id) pairs seen so far, as 64-bit fingerprints in an open-addressing table: 16
 * bytes a span at most, so a file's duplicates can be found without holding its spans. Two
 * different pairs share a fingerprint with odds of about n²/2^65 (one in 30 million for a million
 * spans): good enough for a warning. The table grows up to {@code maxBytes}; past that, pairs are
 * no longer checked ({@link #unchecked()} says how many), rather than taking the heap.
 */
final class SpanIdSet {
  private final long maxSlots;
  private long[] slots = new long[1 << 12];
  private int size;
  private long unchecked;

  SpanIdSet(long maxBytes) {
    this.maxSlots = Math.max(1 << 12, Long.highestOneBit(Math.max(1, maxBytes / 8)));
  }

  /** False when this pair was added before (the span repeats a span id of its trace). */
  boolean add(ByteString traceId, ByteString spanId) {
    long h = fingerprint(traceId, spanId);
    if (2L * (size + 1) > slots.length) { // load at most 1/2
      if (2L * slots.length > maxSlots) {
        unchecked++;
        return true;
      }
      grow();
    }
    int mask = slots.length - 1;
    for (int i = (int) h & mask; ; i = (i + 1) & mask) {
      long s = slots[i];
      if (s == 0) {
        slots[i] = h;
        size++;
        return true;
      }
      if (s == h) {
        return false;
      }
    }
  }

  /** Spans not checked because the table was full. */
  long unchecked() {
    return unchecked;
  }

  private void grow() {
    long[] old = slots;
    slots = new long[old.length * 2];
    int mask = slots.length - 1;
    for (long h : old) {
      if (h != 0) {
        int i = (int) h & mask;
        while (slots[i] != 0) {
          i = (i + 1) & mask;
        }
        slots[i] = h;
      }
    }
  }

  private static long fingerprint(ByteString traceId, ByteString spanId) {
    long h = 0x9E3779B97F4A7C15L;
    h = mix(h ^ bits(traceId, 0));
    h = mix(h ^ bits(traceId, 8));
    h = mix(h ^ bits(spanId, 0));
    return h == 0 ? 1 : h; // 0 marks an empty slot
  }

  private static long bits(ByteString b, int from) {
    long v = 0;
    for (int i = from, end = Math.min(b.size(), from + 8); i < end; i++) {
      v = v << 8 | (b.byteAt(i) & 0xff);
    }
    return v;
  }

  /** Murmur3's 64-bit finalizer. */
  private static long mix(long h) {
    h ^= h >>> 33;
    h *= 0xff51afd7ed558ccdL;
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }
}
