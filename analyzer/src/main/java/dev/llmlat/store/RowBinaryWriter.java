package dev.llmlat.store;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Writes values in ClickHouse's {@code RowBinary} format: little-endian fixed-width numbers,
 * LEB128 lengths, {@code DateTime64(9)} as signed nanoseconds.
 */
public final class RowBinaryWriter {
  private final ByteArrayOutputStream out;

  public RowBinaryWriter(int initialCapacity) {
    out = new ByteArrayOutputStream(initialCapacity);
  }

  public RowBinaryWriter uint8(int v) {
    out.write(v);
    return this;
  }

  public RowBinaryWriter uint16(int v) {
    out.write(v);
    out.write(v >>> 8);
    return this;
  }

  public RowBinaryWriter uint32(long v) {
    for (int i = 0; i < 4; i++) {
      out.write((int) (v >>> (8 * i)));
    }
    return this;
  }

  /** UInt64, Int64 and DateTime64(9) (nanoseconds since the epoch). */
  public RowBinaryWriter int64(long v) {
    for (int i = 0; i < 8; i++) {
      out.write((int) (v >>> (8 * i)));
    }
    return this;
  }

  public RowBinaryWriter varUInt(long v) {
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
    return this;
  }

  /** String and LowCardinality(String). */
  public RowBinaryWriter string(String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    varUInt(bytes.length);
    out.write(bytes, 0, bytes.length);
    return this;
  }

  /** Map(String, String) and Map(LowCardinality(String), String). */
  public RowBinaryWriter stringMap(Map<String, String> map) {
    varUInt(map.size());
    map.forEach((k, v) -> string(k).string(v));
    return this;
  }

  /** The length prefix of an Array(...); the caller writes the elements. */
  public RowBinaryWriter arrayLength(int n) {
    return varUInt(n);
  }

  public int size() {
    return out.size();
  }

  public byte[] toByteArray() {
    return out.toByteArray();
  }

  public void reset() {
    out.reset();
  }
}
