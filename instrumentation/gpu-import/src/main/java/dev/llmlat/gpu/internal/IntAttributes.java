package dev.llmlat.gpu.internal;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;

/**
 * Integer attributes of one key, made once per distinct value when values repeat (device, stream,
 * process, thread: a handful per export), else built through reused builders (correlation ids are
 * unique). Keyed by primitive long: a boxed map lookup per kernel showed in the profile.
 */
final class IntAttributes {
  private static final int CAPACITY = 8192; // remembers up to half as many values, then builds
  private final String key;
  private final boolean remember;
  private final long[] values;
  private final KeyValue[] attrs;
  private final KeyValue.Builder kv = KeyValue.newBuilder();
  private final AnyValue.Builder any = AnyValue.newBuilder();
  private int size;

  private IntAttributes(String key, boolean remember) {
    this.key = key;
    this.remember = remember;
    this.values = remember ? new long[CAPACITY] : null;
    this.attrs = remember ? new KeyValue[CAPACITY] : null;
    kv.setKey(key);
  }

  /** For values that repeat: each distinct value's attribute is made once. */
  static IntAttributes repeated(String key) {
    return new IntAttributes(key, true);
  }

  /** For values that rarely repeat: built each time, without per-call builder garbage. */
  static IntAttributes unique(String key) {
    return new IntAttributes(key, false);
  }

  KeyValue of(long value) {
    if (!remember) {
      return build(value);
    }
    int mask = CAPACITY - 1;
    int i = (int) Ids.mix(value) & mask;
    while (attrs[i] != null) {
      if (values[i] == value) {
        return attrs[i];
      }
      i = (i + 1) & mask;
    }
    KeyValue a = build(value);
    if (size < CAPACITY / 2) {
      values[i] = value;
      attrs[i] = a;
      size++;
    }
    return a;
  }

  private KeyValue build(long value) {
    return kv.setValue(any.setIntValue(value)).build();
  }
}
