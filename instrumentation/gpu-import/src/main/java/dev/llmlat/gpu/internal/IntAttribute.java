package dev.llmlat.gpu.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes a span's integer attribute ({@code attributes} field: KeyValue { key, value { int_value }
 * }) straight into a {@link ProtoWriter}; the key's bytes are encoded once. An attribute whose
 * values repeat (device, stream, process, thread) keeps the whole field of recent values encoded:
 * one copy instead of seven small writes per span.
 */
final class IntAttribute {
  private static final int KEY = ProtoWriter.lenTag(1);
  private static final int VALUE = ProtoWriter.lenTag(2);
  private static final int INT_VALUE = 3 << 3; // varint
  private static final int CACHED = 16;

  private final byte[] key;

  /**
   * By the value's varint size: the field's bytes before the value, which depend only on that size.
   */
  private final byte[][] prefixes = new byte[11][];

  private final long[] cachedValues;
  private final byte[][] cachedFields;

  /** An attribute whose values seldom repeat (a correlation id). */
  IntAttribute(String key) {
    this(key, false);
  }

  /**
   * @param repeating whether to keep the fields of recent values encoded
   */
  IntAttribute(String key, boolean repeating) {
    this.key = key.getBytes(StandardCharsets.UTF_8);
    this.cachedValues = repeating ? new long[CACHED] : null;
    this.cachedFields = repeating ? new byte[CACHED][] : null;
  }

  void write(ProtoWriter w, long value) {
    if (cachedFields == null) {
      encode(w, value);
      return;
    }
    int slot = (int) (value ^ (value >>> 32)) & (CACHED - 1);
    byte[] field = cachedFields[slot];
    if (field == null || cachedValues[slot] != value) {
      ProtoWriter one = new ProtoWriter(key.length + 24);
      encode(one, value);
      field = Arrays.copyOf(one.array(), one.size());
      cachedFields[slot] = field;
      cachedValues[slot] = value;
    }
    w.raw(field);
  }

  private void encode(ProtoWriter w, long value) {
    int size = ProtoWriter.varintSize(value);
    byte[] prefix = prefixes[size];
    if (prefix == null) {
      int any = 1 + size;
      int keyValue = 1 + ProtoWriter.varintSize(key.length) + key.length + 1 + 1 + any;
      ProtoWriter p = new ProtoWriter(key.length + 16);
      p.varint(SpanFields.ATTRIBUTES);
      p.varint(keyValue);
      p.lengthDelimited(KEY, key, 0, key.length);
      p.rawByte(VALUE);
      p.rawByte(any);
      p.rawByte(INT_VALUE);
      prefix = Arrays.copyOf(p.array(), p.size());
      prefixes[size] = prefix;
    }
    w.raw(prefix);
    w.varint(value);
  }
}
