package dev.llmlat.otlpkafka;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import java.util.List;

/**
 * OTLP attribute values as producers of encoded records (importers, the eBPF bridge) put them on
 * spans.
 */
public final class OtlpAttributes {
  private OtlpAttributes() {}

  public static KeyValue string(String key, String value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setStringValue(value))
        .build();
  }

  public static KeyValue integer(String key, long value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setIntValue(value))
        .build();
  }

  public static KeyValue bool(String key, boolean value) {
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setBoolValue(value))
        .build();
  }

  public static KeyValue integers(String key, long[] values) {
    ArrayValue.Builder a = ArrayValue.newBuilder();
    for (long v : values) {
      a.addValues(AnyValue.newBuilder().setIntValue(v));
    }
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setArrayValue(a))
        .build();
  }

  public static KeyValue strings(String key, List<String> values) {
    ArrayValue.Builder a = ArrayValue.newBuilder();
    for (String v : values) {
      a.addValues(AnyValue.newBuilder().setStringValue(v));
    }
    return KeyValue.newBuilder()
        .setKey(key)
        .setValue(AnyValue.newBuilder().setArrayValue(a))
        .build();
  }
}
