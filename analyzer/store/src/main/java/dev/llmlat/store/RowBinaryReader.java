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
