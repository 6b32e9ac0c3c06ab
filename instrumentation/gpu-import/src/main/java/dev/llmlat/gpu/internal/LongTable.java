package dev.llmlat.gpu.internal;

import java.util.Arrays;

/**
 * Open-addressing map from a long key to a few long values, without boxing: JSON traces index their
 * launch calls by correlation id (hundreds of thousands of entries in a large trace).
 */
public final class LongTable {
  private static final long EMPTY = Long.MIN_VALUE;
  private final int width;
  private long[] keys;
  private long[] values;
  private int size;

  public LongTable(int width) {
    this.width = width;
    this.keys = new long[1024];
    Arrays.fill(keys, EMPTY);
    this.values = new long[1024 * width];
  }

  /** Stores {@code vals} for {@code key} unless the key is present already (the first wins). */
  public void putIfAbsent(long key, long... vals) {
    if ((size + 1) * 2 > keys.length) {
      grow();
    }
    int i = slot(key, keys);
    if (keys[i] == EMPTY) {
      keys[i] = key;
      System.arraycopy(vals, 0, values, i * width, width);
      size++;
    }
  }

  /** The index of {@code key} for {@link #value}, or -1. */
  public int find(long key) {
    int i = slot(key, keys);
    return keys[i] == EMPTY ? -1 : i;
  }

  public long value(int index, int column) {
    return values[index * width + column];
  }

  public int size() {
    return size;
  }

  private static int slot(long key, long[] keys) {
    int mask = keys.length - 1;
    int i = (int) Ids.mix(key) & mask;
    while (keys[i] != EMPTY && keys[i] != key) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private void grow() {
    long[] oldKeys = keys;
    long[] oldValues = values;
    keys = new long[oldKeys.length * 2];
    Arrays.fill(keys, EMPTY);
    values = new long[keys.length * width];
    for (int j = 0; j < oldKeys.length; j++) {
      if (oldKeys[j] != EMPTY) {
        int i = slot(oldKeys[j], keys);
        keys[i] = oldKeys[j];
        System.arraycopy(oldValues, j * width, values, i * width, width);
      }
    }
  }
}
