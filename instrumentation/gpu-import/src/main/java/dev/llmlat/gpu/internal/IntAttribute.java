package dev.llmlat.gpu.internal;

import java.nio.charset.StandardCharsets;

/**
 * Writes a span's integer attribute ({@code attributes} field: KeyValue { key, value { int_value } })
 * straight into a {@link ProtoWriter}; the key's bytes are encoded once.
 */
final class IntAttribute {
  private static final int KEY = ProtoWriter.lenTag(1);
  private static final int VALUE = ProtoWriter.lenTag(2);
  private static final int INT_VALUE = 3 << 3; // varint

  private final byte[] key;

  IntAttribute(String key) {
    this.key = key.getBytes(StandardCharsets.UTF_8);
  }

  void write(ProtoWriter w, long value) {
    int any = 1 + ProtoWriter.varintSize(value);
    int keyValue = 1 + ProtoWriter.varintSize(key.length) + key.length + 1 + 1 + any;
    w.varint(SpanFields.ATTRIBUTES);
    w.varint(keyValue);
    w.lengthDelimited(KEY, key, 0, key.length);
    w.rawByte(VALUE);
    w.rawByte(any);
    w.rawByte(INT_VALUE);
    w.varint(value);
  }
}
