package dev.llmlat.gpu.internal;

/**
 * Up to {@link #CAPACITY} activities' rows in columns: what {@link NsysReader} hands the importing
 * thread, which joins them to their launch call and step and builds spans from them.
 */
final class ActivityBatch {
  static final int CAPACITY = 1024;

  /** About what one batch takes on the heap. */
  static final long BYTES = CAPACITY * (4L + 7 * 8 + 8 + 1) + 1024;

  final int[] kind = new int[CAPACITY];
  final long[] start = new long[CAPACITY];
  final long[] end = new long[CAPACITY];

  /** UTF-8 of the name (shared, not to be modified); null: none (the kind names the span). */
  final byte[][] name = new byte[CAPACITY][];

  final long[] device = new long[CAPACITY];
  final long[] stream = new long[CAPACITY];

  /** Or {@link ActivityCursor#NONE}. */
  final long[] correlation = new long[CAPACITY];

  /** Or {@link ActivityCursor#NONE}. */
  final long[] globalPid = new long[CAPACITY];

  final long[] bytes = new long[CAPACITY];

  /**
   * Already handed out before the rows turned out not to be in start order (see {@link
   * ActivityStream}).
   */
  final boolean[] seen = new boolean[CAPACITY];

  int size;

  /**
   * Marks the (empty) batch after which the activities come again, sorted, all of them: those
   * already handed out {@link #seen}.
   */
  boolean restart;

  /** Marks the (empty) batch after the last one. */
  boolean last;

  /** On the last batch: what the rows were kept with (see {@link ActivityCursor#addWarnings}). */
  Warnings warnings;

  /** Set when reading failed; the importing thread rethrows it. */
  Exception failure;

  boolean isFull() {
    return size == CAPACITY;
  }
}
