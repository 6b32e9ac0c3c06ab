package dev.llmlat.gpu.internal;

import dev.llmlat.gpu.UnattributedReason;

/**
 * Up to {@link #CAPACITY} activities, already joined to their launch call and step, in columns:
 * what {@link NsysReader} hands the importing thread, which only builds spans from them.
 */
final class ActivityBatch {
  static final int CAPACITY = 1024;

  final int[] kind = new int[CAPACITY];
  final long[] start = new long[CAPACITY];
  final long[] end = new long[CAPACITY];
  final String[] name = new String[CAPACITY];
  final long[] device = new long[CAPACITY];
  final long[] stream = new long[CAPACITY];
  final long[] correlation = new long[CAPACITY];
  final long[] bytes = new long[CAPACITY];
  final long[] pid = new long[CAPACITY];
  final long[] tid = new long[CAPACITY];
  final int[] step = new int[CAPACITY];
  final UnattributedReason[] reason = new UnattributedReason[CAPACITY];
  int size;
  /** Marks the (empty) batch after the last one. */
  boolean last;
  /** Set when reading failed; the importing thread rethrows it. */
  Exception failure;

  boolean isFull() {
    return size == CAPACITY;
  }
}
