package dev.llmlat.store;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * Reads values in ClickHouse's {@code RowBinary} format (the counterpart of {@link
 * RowBinaryWriter}): little-endian numbers, LEB128 lengths, strings as UTF-8.
 */
public final class RowBinaryReader {
  private static final int REPEATED_SLOTS = 512;
  private final byte[] data;
  private int pos;
  private final byte[][] repeatedBytes = new byte[REPEATED_SLOTS][];
  private final String[] repeatedStrings = new String[REPEATED_SLOTS];

  public RowBinaryReader(byte[] data) {
    this.data = data;
  }

  public boolean hasMore() {
    return pos < data.length;
  }

  public long int64() {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v |= (data[pos + i] & 0xFFL) << (8 * i);
    }
    pos += 8;
    return v;
  }

  public long varUInt() {
    long v = 0;
    int shift = 0;
    while (true) {
      byte b = data[pos++];
      v |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
      shift += 7;
    }
  }

  public String string() {
    int n = (int) varUInt();
    String s = new String(data, pos, n, StandardCharsets.UTF_8);
    pos += n;
    return s;
  }

  /**
   * A string of a low-cardinality column (names, kinds, hosts, attribute keys): equal values come
   * back as one String object, so a read of many rows holds one copy each and later comparisons
   * stop at identity. A small direct-mapped table keyed by the bytes; a miss just makes a new one.
   */
  public String repeatedString() {
    int n = (int) varUInt();
    int h = 1;
    for (int i = pos, end = pos + n; i < end; i++) {
      h = 31 * h + data[i];
    }
    int slot = (h ^ (h >>> 16)) & (REPEATED_SLOTS - 1);
    byte[] known = repeatedBytes[slot];
    String s;
    if (known != null && Arrays.equals(known, 0, known.length, data, pos, pos + n)) {
      s = repeatedStrings[slot];
    } else {
      // interned: the same object as the constants code compares these names with
      s = new String(data, pos, n, StandardCharsets.UTF_8).intern();
      repeatedBytes[slot] = Arrays.copyOfRange(data, pos, pos + n);
      repeatedStrings[slot] = s;
    }
    pos += n;
    return s;
  }

  /**
   * Where in the data each distinct value {@link #sharedString} read lies (offset, length), its
   * string beside.
   */
  private int[] sharedAt = new int[0];

  private int[] sharedLength = new int[0];

  private String[] shared = new String[0];
  private int sharedCount;

  /**
   * A string of a column whose values repeat within one read though there are many of them (trace
   * ids, which every span of a trace carries; span ids, which children name as parent): equal
   * values come back as one String object, so the read holds one copy and hashes it once. Unlike
   * {@link #repeatedString} nothing is interned and every value is kept, for the reader's life (the
   * values stay in its data: the table holds where they lie).
   */
  public String sharedString() {
    int n = (int) varUInt();
    if (n == 0) {
      return "";
    }
    if (2 * (sharedCount + 1) > shared.length) {
      growShared();
    }
    int h = hash(pos, n);
    int mask = shared.length - 1;
    for (int slot = h & mask; ; slot = (slot + 1) & mask) {
      String s = shared[slot];
      if (s == null) {
        s = new String(data, pos, n, StandardCharsets.UTF_8);
        shared[slot] = s;
        sharedAt[slot] = pos;
        sharedLength[slot] = n;
        sharedCount++;
        pos += n;
        return s;
      }
      int at = sharedAt[slot];
      if (sharedLength[slot] == n && Arrays.equals(data, at, at + n, data, pos, pos + n)) {
        pos += n;
        return s;
      }
    }
  }

  private int hash(int from, int n) {
    int h = 1;
    for (int i = from, end = from + n; i < end; i++) {
      h = 31 * h + data[i];
    }
    h *= 0x9E3779B9; // hex ids differ in few bits: spread them over the table
    return h ^ (h >>> 16);
  }

  private void growShared() {
    String[] oldStrings = shared;
    int[] oldAt = sharedAt;
    int[] oldLength = sharedLength;
    int capacity = Math.max(1024, oldStrings.length * 2);
    shared = new String[capacity];
    sharedAt = new int[capacity];
    sharedLength = new int[capacity];
    int mask = capacity - 1;
    for (int i = 0; i < oldStrings.length; i++) {
      if (oldStrings[i] != null) {
        int at = oldAt[i];
        int slot = hash(at, oldLength[i]) & mask;
        while (shared[slot] != null) {
          slot = (slot + 1) & mask;
        }
        shared[slot] = oldStrings[i];
        sharedAt[slot] = at;
        sharedLength[slot] = oldLength[i];
      }
    }
  }

  /**
   * Map(String, String) and Map(LowCardinality(String), String); keys as {@link #repeatedString()}.
   * Immutable, and compact (see {@link CompactStringMap}): it iterates as a {@code HashMap} would.
   */
  public Map<String, String> stringMap() {
    int n = (int) varUInt();
    if (n == 0) {
      return CompactStringMap.EMPTY;
    }
    String[] pairs = new String[2 * n];
    for (int i = 0; i < n; i++) {
      pairs[2 * i] = repeatedString();
      pairs[2 * i + 1] = string();
    }
    return CompactStringMap.of(pairs, n);
  }

  /** The length prefix of an Array(...); the caller reads the elements. */
  public int arrayLength() {
    return (int) varUInt();
  }
}
