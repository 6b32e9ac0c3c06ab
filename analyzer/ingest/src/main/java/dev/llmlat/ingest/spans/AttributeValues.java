package dev.llmlat.ingest.spans;

import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import java.math.BigDecimal;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Renders OTLP attribute values as the strings the Collector's ClickHouse exporter stores in {@code
 * Map(..., String)} columns (pdata's {@code Value.AsString}): scalars in plain text, doubles in
 * shortest form without exponent, bytes in base64, arrays and maps as JSON.
 */
public final class AttributeValues {
  private AttributeValues() {}

  /**
   * The attributes as a new map of the caller's, in their order; a repeated key keeps its first
   * place and its last value.
   */
  public static Map<String, String> toMap(List<KeyValue> attributes) {
    Map<String, String> map = new LinkedHashMap<>(attributes.size() * 2);
    for (KeyValue kv : attributes) {
      map.put(kv.getKey(), asString(kv.getValue()));
    }
    return map;
  }

  public static String asString(AnyValue value) {
    return switch (value.getValueCase()) {
      case STRING_VALUE -> value.getStringValue();
      case BOOL_VALUE -> Boolean.toString(value.getBoolValue());
      case INT_VALUE -> Long.toString(value.getIntValue());
      case DOUBLE_VALUE -> formatDouble(value.getDoubleValue());
      case BYTES_VALUE -> Base64.getEncoder().encodeToString(value.getBytesValue().toByteArray());
      case ARRAY_VALUE, KVLIST_VALUE -> json(value);
      case VALUE_NOT_SET -> "";
      default -> "";
    };
  }

  static String formatDouble(double d) {
    if (Double.isNaN(d)) {
      return "NaN";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "+Inf" : "-Inf";
    }
    if (d == 0) {
      return "0";
    }
    return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
  }

  private static String json(AnyValue value) {
    StringBuilder sb = new StringBuilder();
    appendJson(sb, value);
    return sb.toString();
  }

  private static void appendJson(StringBuilder sb, AnyValue value) {
    switch (value.getValueCase()) {
      case STRING_VALUE, BYTES_VALUE -> quote(sb, asString(value));
      case BOOL_VALUE, INT_VALUE -> sb.append(asString(value));
      case DOUBLE_VALUE -> {
        double d = value.getDoubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d)) {
          quote(sb, formatDouble(d));
        } else {
          sb.append(formatDouble(d));
        }
      }
      case ARRAY_VALUE -> {
        sb.append('[');
        List<AnyValue> values = value.getArrayValue().getValuesList();
        for (int i = 0; i < values.size(); i++) {
          if (i > 0) {
            sb.append(',');
          }
          appendJson(sb, values.get(i));
        }
        sb.append(']');
      }
      case KVLIST_VALUE -> {
        sb.append('{');
        List<KeyValue> values = value.getKvlistValue().getValuesList();
        for (int i = 0; i < values.size(); i++) {
          if (i > 0) {
            sb.append(',');
          }
          quote(sb, values.get(i).getKey());
          sb.append(':');
          appendJson(sb, values.get(i).getValue());
        }
        sb.append('}');
      }
      default -> sb.append("null");
    }
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
