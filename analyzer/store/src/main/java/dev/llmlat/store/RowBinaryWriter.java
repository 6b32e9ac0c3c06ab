package dev.llmlat.store;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * Writes values in ClickHouse's {@code RowBinary} format: little-endian fixed-width numbers, LEB128
 * lengths, {@code DateTime64(9)} as signed nanoseconds.
 */
public final class RowBinaryWriter {
  // A plain array, not a ByteArrayOutputStream: its write(int) is synchronized and re-checks
  // capacity per byte, which showed as most of the analyzer's row encoding in a profile.
  private byte[] buf;
  private int size;

  public RowBinaryWriter(int initialCapacity) {
    buf = new byte[Math.max(16, initialCapacity)];
  }

  private void ensure(int more) {
    if (size + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(size + more, buf.length * 2));
    }
  }

  public RowBinaryWriter uint8(int v) {
    ensure(1);
    buf[size++] = (byte) v;
    return this;
  }

  public RowBinaryWriter uint16(int v) {
    ensure(2);
    buf[size++] = (byte) v;
    buf[size++] = (byte) (v >>> 8);
    return this;
  }

  public RowBinaryWriter uint32(long v) {
    ensure(4);
    for (int i = 0; i < 4; i++) {
      buf[size++] = (byte) (v >>> (8 * i));
    }
    return this;
  }

  /** Int32 (two's complement, little-endian as UInt32). */
  public RowBinaryWriter int32(int v) {
    return uint32(v);
  }

  /** UInt64, Int64 and DateTime64(9) (nanoseconds since the epoch). */
  public RowBinaryWriter int64(long v) {
    ensure(8);
    for (int i = 0; i < 8; i++) {
      buf[size++] = (byte) (v >>> (8 * i));
    }
    return this;
  }

  public RowBinaryWriter varUInt(long v) {
    ensure(10);
    while ((v & ~0x7FL) != 0) {
      buf[size++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[size++] = (byte) v;
    return this;
  }

  /** String and LowCardinality(String). */
  public RowBinaryWriter string(String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    varUInt(bytes.length);
    ensure(bytes.length);
    System.arraycopy(bytes, 0, buf, size, bytes.length);
    size += bytes.length;
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

  /** Appends what {@code other} holds (rows encoded elsewhere, e.g. on another thread). */
  public RowBinaryWriter append(RowBinaryWriter other) {
    ensure(other.size);
    System.arraycopy(other.buf, 0, buf, size, other.size);
    size += other.size;
    return this;
  }

  public int size() {
    return size;
  }

  public byte[] toByteArray() {
    return Arrays.copyOf(buf, size);
  }

  public void reset() {
    size = 0;
  }
}
