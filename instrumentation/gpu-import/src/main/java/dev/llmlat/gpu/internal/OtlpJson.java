package dev.llmlat.gpu.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Set;

/**
 * OTLP/JSON (the Collector's file exporter, the OTLP/HTTP JSON encoding) to protobuf. Differs from
 * protobuf's canonical JSON as the OTLP spec says: trace and span ids are hex, not base64; enums may
 * be integers; 64-bit integers may be strings; keys are lowerCamelCase (snake_case accepted).
 * Unknown fields are skipped. Driven by the message descriptors, so every OTLP trace field is read.
 */
public final class OtlpJson {
  private static final Set<String> HEX_FIELDS = Set.of("trace_id", "span_id", "parent_span_id");
  private static final HexFormat HEX = HexFormat.of();

  private OtlpJson() {}

  public interface Visitor {
    void request(ExportTraceServiceRequest request);
  }

  /** Reads consecutive root objects (one per line, or one document) and hands each over. */
  public static long scan(Path file, ImportProgress progress, long base, long total, Visitor visitor)
      throws InvalidExportException {
    long n = 0;
    try (InputStream in = Inputs.open(file, progress, base, total); JsonParser p = Inputs.parser(in)) {
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (t != JsonToken.START_OBJECT) {
          throw new InvalidExportException(file, "OTLP/JSON request " + (n + 1) + " is not an object (line "
              + p.currentLocation().getLineNr() + ")");
        }
        ExportTraceServiceRequest.Builder b = ExportTraceServiceRequest.newBuilder();
        readMessage(file, p, b);
        if (b.getResourceSpansCount() == 0) {
          throw new InvalidExportException(file, "OTLP/JSON request " + (n + 1) + " has no resourceSpans (line "
              + p.currentLocation().getLineNr() + ")");
        }
        visitor.request(b.build());
        n++;
      }
    } catch (IOException e) {
      throw Inputs.invalid(file, e);
    } catch (IllegalArgumentException e) {
      throw new InvalidExportException(file, "bad OTLP/JSON value", e);
    }
    if (n == 0) {
      throw new InvalidExportException(file, "no OTLP/JSON requests (empty file)");
    }
    return n;
  }

  private static void readMessage(Path file, JsonParser p, Message.Builder b) throws IOException {
    Descriptor d = b.getDescriptorForType();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      FieldDescriptor f = field(d, name);
      if (f == null || v == JsonToken.VALUE_NULL) {
        p.skipChildren();
        continue;
      }
      if (f.isRepeated()) {
        if (v != JsonToken.START_ARRAY) {
          throw new InvalidExportException(file, "field '" + name + "' should be an array (line "
              + p.currentLocation().getLineNr() + ")");
        }
        while (p.nextToken() != JsonToken.END_ARRAY) {
          b.addRepeatedField(f, value(file, p, b, f));
        }
      } else {
        b.setField(f, value(file, p, b, f));
      }
    }
  }

  private static FieldDescriptor field(Descriptor d, String name) {
    for (FieldDescriptor f : d.getFields()) {
      if (f.getJsonName().equals(name) || f.getName().equals(name)) {
        return f;
      }
    }
    return null;
  }

  private static Object value(Path file, JsonParser p, Message.Builder parent, FieldDescriptor f) throws IOException {
    JsonToken v = p.currentToken();
    switch (f.getJavaType()) {
      case MESSAGE: {
        if (v != JsonToken.START_OBJECT) {
          throw new InvalidExportException(file, "field '" + f.getJsonName() + "' should be an object (line "
              + p.currentLocation().getLineNr() + ")");
        }
        Message.Builder child = parent.newBuilderForField(f);
        readMessage(file, p, child);
        return child.build();
      }
      case STRING:
        return p.getText();
      case BOOLEAN:
        return v == JsonToken.VALUE_STRING ? Boolean.parseBoolean(p.getText()) : p.getBooleanValue();
      case INT:
        return (int) longValue(p, v);
      case LONG:
        return longValue(p, v);
      case DOUBLE:
        return v == JsonToken.VALUE_STRING ? Double.parseDouble(p.getText()) : p.getDoubleValue();
      case FLOAT:
        return (float) (v == JsonToken.VALUE_STRING ? Double.parseDouble(p.getText()) : p.getDoubleValue());
      case BYTE_STRING: {
        String s = p.getText();
        return HEX_FIELDS.contains(f.getName()) ? ByteString.copyFrom(HEX.parseHex(s))
            : ByteString.copyFrom(Base64.getDecoder().decode(s));
      }
      case ENUM: {
        EnumValueDescriptor e = v == JsonToken.VALUE_NUMBER_INT
            ? f.getEnumType().findValueByNumberCreatingIfUnknown(p.getIntValue())
            : f.getEnumType().findValueByName(p.getText());
        if (e == null) {
          throw new InvalidExportException(file, "unknown " + f.getEnumType().getName() + " '" + p.getText() + "'");
        }
        return e;
      }
      default:
        throw new IllegalStateException("unhandled field type " + f.getJavaType());
    }
  }

  private static long longValue(JsonParser p, JsonToken v) throws IOException {
    if (v == JsonToken.VALUE_STRING) {
      String s = p.getText().trim();
      return s.startsWith("-") ? Long.parseLong(s) : Long.parseUnsignedLong(s);
    }
    if (v == JsonToken.VALUE_NUMBER_INT) {
      return p.getBigIntegerValue().longValue(); // fixed64 above 2^63 stays its bit pattern
    }
    throw new IllegalArgumentException("expected an integer, got " + v);
  }
}
