package dev.llmlat.store;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads values in ClickHouse's {@code RowBinary} format (the counterpart of {@link
 * RowBinaryWriter}): little-endian numbers, LEB128 lengths, strings as UTF-8.
 */
public final class RowBinaryReader {
  private final byte[] data;
  private int pos;

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

  /** Map(String, String) and Map(LowCardinality(String), String). */
  public Map<String, String> stringMap() {
    int n = (int) varUInt();
    Map<String, String> map = new HashMap<>(n * 2);
    for (int i = 0; i < n; i++) {
      map.put(string(), string());
    }
    return map;
  }

  /** The length prefix of an Array(...); the caller reads the elements. */
  public int arrayLength() {
    return (int) varUInt();
  }
}
