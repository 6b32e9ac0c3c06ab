package dev.llmlat.otlpjson.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.llmlat.otlpjson.SpanCheck;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One OTLP message from JSON, driven by its descriptor, so every field is read. Differs from
 * protobuf's canonical JSON as the OTLP spec says: trace and span ids are hex, not base64; enums
 * may be integers; 64-bit integers may be strings; keys are lowerCamelCase (snake_case accepted).
 * Every value is checked against its field: ids that are no hex of the right length, integers out
 * of their field's range, times past 2262 (a long's Unix ns).
 */
public final class MessageReader {
  static final String PAST_2262 = "is past year 2262 (Unix ns overflow)";
  private static final HexFormat HEX = HexFormat.of();
  private static final Map<Descriptor, Map<String, FieldDescriptor>> FIELDS =
      new ConcurrentHashMap<>();
  private static final long NOT_A_LONG = Long.MIN_VALUE;

  private MessageReader() {}

  /**
   * A value its field cannot hold. The message is the path to the value and the problem, {@code
   * events[0].timeUnixNano: 'x' is not an integer}; the caller adds where the message is.
   */
  public static final class Problem extends Exception {
    private static final long serialVersionUID = 1L;

    Problem(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Reads the fields of one message into {@code b}, the parser on the message's START_OBJECT;
   * leaves it on the END_OBJECT. Unknown fields and nulls are skipped.
   */
  public static void read(JsonParser p, Message.Builder b) throws IOException, Problem {
    Map<String, FieldDescriptor> fields = fields(b.getDescriptorForType());
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      FieldDescriptor f = fields.get(name);
      if (f == null || v == JsonToken.VALUE_NULL) {
        p.skipChildren();
        continue;
      }
      if (f.isRepeated()) {
        if (v != JsonToken.START_ARRAY) {
          throw new Problem(f.getJsonName() + ": should be an array");
        }
        int i = 0;
        while (p.nextToken() != JsonToken.END_ARRAY) {
          try {
            b.addRepeatedField(f, value(p, b, f));
          } catch (Problem e) {
            throw within(f.getJsonName() + "[" + i + "]", e);
          }
          i++;
        }
      } else {
        try {
          b.setField(f, value(p, b, f));
        } catch (Problem e) {
          throw within(f.getJsonName(), e);
        }
      }
    }
  }

  /**
   * {@code e} of a value of {@code field}: {@code field: problem}, or {@code field.nested:
   * problem}.
   */
  private static Problem within(String field, Problem e) {
    String m = e.getMessage();
    return new Problem(field + (m.startsWith(":") ? "" : ".") + m);
  }

  /** A message's fields by JSON name and by proto name, built once per message type. */
  private static Map<String, FieldDescriptor> fields(Descriptor d) {
    return FIELDS.computeIfAbsent(
        d,
        k -> {
          Map<String, FieldDescriptor> m = new HashMap<>();
          for (FieldDescriptor f : k.getFields()) {
            m.put(f.getName(), f);
            m.put(f.getJsonName(), f);
          }
          return m;
        });
  }

  /**
   * One value of field {@code f}. A {@link Problem}'s message starts with what follows the field
   * name: {@code ": 'zz' is not hex"} for a scalar, the nested field's name for a message.
   */
  private static Object value(JsonParser p, Message.Builder parent, FieldDescriptor f)
      throws IOException, Problem {
    JsonToken v = p.currentToken();
    switch (f.getJavaType()) {
      case MESSAGE:
        {
          if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            throw new Problem(": should be an object");
          }
          Message.Builder child = parent.newBuilderForField(f);
          read(p, child);
          return child.build();
        }
      case STRING:
        if (v.isStructStart()) {
          p.skipChildren();
          throw new Problem(": should be a string");
        }
        return p.getText();
      case BOOLEAN:
        if (v == JsonToken.VALUE_TRUE || v == JsonToken.VALUE_FALSE) {
          return v == JsonToken.VALUE_TRUE;
        }
        if (v == JsonToken.VALUE_STRING
            && (p.getText().equals("true") || p.getText().equals("false"))) {
          return p.getText().equals("true");
        }
        p.skipChildren();
        throw new Problem(": '" + clip(p.getText()) + "' is not true or false");
      case INT:
        return (int) integer(p, v, f);
      case LONG:
        return integer(p, v, f);
      case DOUBLE:
        return floating(p, v);
      case FLOAT:
        return (float) floating(p, v);
      case BYTE_STRING:
        return bytes(p, v, f);
      case ENUM:
        {
          EnumValueDescriptor e =
              v == JsonToken.VALUE_NUMBER_INT
                  ? f.getEnumType().findValueByNumberCreatingIfUnknown((int) integer(p, v, f))
                  : f.getEnumType().findValueByName(p.getText());
          if (e == null) {
            throw new Problem(": unknown " + f.getEnumType().getName() + " '" + p.getText() + "'");
          }
          return e;
        }
      default:
        throw new IllegalStateException("unhandled field type " + f.getJavaType());
    }
  }

  private static double floating(JsonParser p, JsonToken v) throws IOException, Problem {
    if (v == JsonToken.VALUE_STRING) {
      try {
        return Double.parseDouble(p.getText()); // "NaN", "Infinity" too, as proto JSON allows
      } catch (NumberFormatException e) {
        throw new Problem(": '" + clip(p.getText()) + "' is not a number");
      }
    }
    if (!v.isNumeric()) {
      p.skipChildren();
      throw new Problem(": expected a number, got " + v);
    }
    return p.getDoubleValue();
  }

  /** Trace and span ids are hex of 16 and 8 bytes (or empty: not given); other bytes are base64. */
  private static ByteString bytes(JsonParser p, JsonToken v, FieldDescriptor f)
      throws IOException, Problem {
    if (v != JsonToken.VALUE_STRING) {
      p.skipChildren();
      throw new Problem(": expected a string, got " + v);
    }
    String s = p.getText();
    int size =
        switch (f.getName()) {
          case "trace_id" -> 16;
          case "span_id", "parent_span_id" -> 8;
          default -> -1;
        };
    if (size < 0) {
      try {
        return ByteString.copyFrom(Base64.getDecoder().decode(s));
      } catch (IllegalArgumentException e) {
        throw new Problem(": '" + clip(s) + "' is not base64");
      }
    }
    if (s.isEmpty()) {
      return ByteString.EMPTY;
    }
    if (s.length() != 2 * size) {
      throw new Problem(
          ": '" + clip(s) + "' is " + s.length() + " characters, not " + 2 * size + " hex digits");
    }
    try {
      return ByteString.copyFrom(HEX.parseHex(s));
    } catch (IllegalArgumentException e) {
      throw new Problem(": '" + clip(s) + "' is not hex");
    }
  }

  /**
   * An integer, number or string, checked against its field's type: int32 and uint32 ranges, no
   * negative unsigned value, nothing past 2^64; a {@code ...TimeUnixNano} no later than a long's
   * Unix ns (2262). Unsigned 64-bit values above 2^63 keep their bit pattern (a negative long).
   */
  private static long integer(JsonParser p, JsonToken v, FieldDescriptor f)
      throws IOException, Problem {
    FieldDescriptor.Type type = f.getType();
    boolean unsigned =
        type == FieldDescriptor.Type.UINT32
            || type == FieldDescriptor.Type.FIXED32
            || type == FieldDescriptor.Type.UINT64
            || type == FieldDescriptor.Type.FIXED64;
    boolean wide = f.getJavaType() == FieldDescriptor.JavaType.LONG;
    long value;
    String text;
    if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
      value = p.getLongValue(); // the common case: no text, no allocation
      text = null;
    } else if (v == JsonToken.VALUE_STRING
        && (value = parseLong(text = p.getText().trim())) != NOT_A_LONG) {
      // the other common case: int64 as a string, as the OTLP spec writes them
    } else {
      BigInteger big;
      text = p.getText().trim();
      try {
        if (v == JsonToken.VALUE_NUMBER_INT) {
          big = p.getBigIntegerValue();
        } else if (v == JsonToken.VALUE_NUMBER_FLOAT || v == JsonToken.VALUE_STRING) {
          BigDecimal d =
              new BigDecimal(text); // "1e3" is an integer too, as protobuf's JSON reads it
          if (d.precision() - d.scale() > 21) {
            throw new Problem(": " + clip(text) + " does not fit " + typeName(f));
          }
          big = d.toBigIntegerExact();
        } else {
          p.skipChildren();
          throw new Problem(": expected an integer, got " + v);
        }
      } catch (NumberFormatException | ArithmeticException e) {
        throw new Problem(": '" + clip(text) + "' is not an integer");
      }
      if (big.signum() < 0
          ? big.bitLength() > 63
          : big.bitLength() > (unsigned && wide ? 64 : 63)) {
        throw new Problem(
            ": "
                + clip(text)
                + (f.getName().endsWith("time_unix_nano") && big.signum() > 0
                    ? " ns " + PAST_2262
                    : " does not fit " + typeName(f)));
      }
      value = big.longValue();
      if (unsigned
          && wide
          && big.signum() > 0
          && value < 0
          && !f.getName().endsWith("time_unix_nano")) {
        return value; // above 2^63: the bit pattern
      }
    }
    if (unsigned && value < 0) {
      throw new Problem(
          ": "
              + (text == null ? value : text)
              + (value < 0 && text != null && !text.startsWith("-")
                  ? " ns " + PAST_2262
                  : " is negative (" + typeName(f) + ")"));
    }
    if (!wide && (unsigned ? value > SpanCheck.UINT32_MAX : value != (int) value)) {
      throw new Problem(": " + value + " does not fit " + typeName(f));
    }
    return value;
  }

  /**
   * {@code s} as a long when it is plain digits with an optional '-' that fit, else {@link
   * #NOT_A_LONG}.
   */
  private static long parseLong(String s) {
    int n = s.length();
    int from = n > 0 && s.charAt(0) == '-' ? 1 : 0;
    if (n == from || n - from > 19) {
      return NOT_A_LONG; // empty, or too long: the exact path decides
    }
    long v = 0;
    for (int i = from; i < n; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return NOT_A_LONG;
      }
      if (i - from == 18 && v > (Long.MAX_VALUE - (c - '0')) / 10) {
        return NOT_A_LONG; // the 19th digit overflows
      }
      v = v * 10 + (c - '0');
    }
    return from == 1 ? -v : v;
  }

  private static String typeName(FieldDescriptor f) {
    return f.getType().name().toLowerCase(Locale.ROOT);
  }

  private static String clip(String s) {
    return s.length() > 64 ? s.substring(0, 64) + "..." : s;
  }
}
