package dev.llmlat.gpu.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.llmlat.gpu.ImportProgress;
import dev.llmlat.gpu.InvalidExportException;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * OTLP/JSON (the Collector's file exporter, the OTLP/HTTP JSON encoding) to protobuf, span by span.
 * Differs from protobuf's canonical JSON as the OTLP spec says: trace and span ids are hex, not
 * base64; enums may be integers; 64-bit integers may be strings; keys are lowerCamelCase (snake_case
 * accepted). Unknown fields are skipped. Driven by the message descriptors, so every OTLP trace field
 * is read.
 *
 * <p>Streams: {@code resourceSpans[].scopeSpans[].spans[]} are walked with the JSON parser and
 * each span is built and handed over alone, so a file holding one huge {@code
 * ExportTraceServiceRequest} takes memory per span, not per file. Resource and scope travel with
 * each span ({@link ScopeGroup}); where a file puts them (or their {@code schemaUrl}, as the
 * Collector does) after the spans, the first {@link #scan} notes them and later scans of the same
 * reader know them before the first span.
 *
 * <p>Values are checked as they are read, and a bad one fails the file naming the request, the span
 * (position, name, line) and the field: ids that are no hex of the right length, all-zero or missing
 * trace and span ids, integers out of their field's range, times past 2262 (a long's Unix ns), a
 * start that is missing, 0 or negative, an end before the start, a GPU device or stream id that
 * does not fit {@code gpu_kernels}.
 */
public final class OtlpJson {
  private static final HexFormat HEX = HexFormat.of();
  private static final Map<Descriptor, Map<String, FieldDescriptor>> FIELDS = new ConcurrentHashMap<>();

  /** The resource a run of spans shares: one per {@code resourceSpans} object. */
  public static final class ResourceGroup {
    public Resource resource = Resource.getDefaultInstance();
    public String schemaUrl = "";
  }

  /** The resource and scope a run of spans shares: one per {@code scopeSpans} object. */
  public static final class ScopeGroup {
    public final ResourceGroup resource;
    public InstrumentationScope scope = InstrumentationScope.getDefaultInstance();
    public String schemaUrl = "";

    ScopeGroup(ResourceGroup resource) {
      this.resource = resource;
    }
  }

  /** Where the reader is: valid during a {@link SpanVisitor} call. */
  public static final class Where {
    long request;
    int requestLine;
    int resource;
    int scope;
    int span;
    int spanLine;
    String spanName;

    /** {@code request 2 (line 2), resourceSpans[0].scopeSpans[0].spans[5] 'GET /x' (line 2)}. */
    public String describe() {
      return "request " + request + " (line " + requestLine + "), resourceSpans[" + resource + "].scopeSpans[" + scope
          + "].spans[" + span + "]" + (spanName == null || spanName.isEmpty() ? "" : " '" + spanName + "'")
          + " (line " + spanLine + ")";
    }

    String at(String path) {
      return "request " + request + " (line " + requestLine + "), " + path;
    }
  }

  /** Receives the spans in file order. */
  public interface SpanVisitor {
    void span(ScopeGroup group, Span span, Where where) throws IOException;

    /** After the last span of a root object (one request). */
    default void endRequest() throws IOException {}
  }

  /** Receives whole requests (one per root object): for small files and tests. */
  public interface Visitor {
    void request(ExportTraceServiceRequest request);
  }

  /** A value the field cannot hold; the caller adds where it is. */
  private static final class Problem extends Exception {
    private static final long serialVersionUID = 1L;

    Problem(String message) {
      super(message, null, false, false);
    }
  }

  private final Path file;
  /**
   * Resources and scopes (with their schemaUrl) that came after spans of theirs, by position
   * ({@code request/resource} or {@code request/resource/scope}): recorded by the first scan, used by
   * the later ones. Only these are kept, so memory stays small for files that put them first.
   */
  private final Map<String, Object[]> late = new HashMap<>();
  private boolean scanned;

  public OtlpJson(Path file) {
    this.file = file;
  }

  /** Reads consecutive root objects (one per line, or one document) and hands each over whole. */
  public static long scan(Path file, ImportProgress progress, long base, long total, Visitor visitor)
      throws InvalidExportException {
    Collector c = new Collector(visitor);
    return new OtlpJson(file).scan(progress, base, total, c);
  }

  /**
   * Reads consecutive root objects (one per line, or one document), handing over each span with
   * its resource and scope; returns how many root objects (requests) there were.
   */
  public long scan(ImportProgress progress, long base, long total, SpanVisitor visitor) throws InvalidExportException {
    boolean record = !scanned;
    long n = 0;
    Where w = new Where();
    try (InputStream in = Inputs.open(file, progress, base, total); JsonParser p = Inputs.parser(in)) {
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        w.request = n + 1;
        w.requestLine = p.currentTokenLocation().getLineNr();
        if (t != JsonToken.START_OBJECT) {
          throw new InvalidExportException(file, "OTLP/JSON request " + w.request + " is not an object (line "
              + w.requestLine + ")");
        }
        if (readRequest(p, w, visitor, record) == 0) {
          throw new InvalidExportException(file, "OTLP/JSON request " + w.request + " has no resourceSpans (line "
              + w.requestLine + ")");
        }
        visitor.endRequest();
        n++;
      }
    } catch (IOException e) {
      throw Inputs.invalid(file, e);
    }
    if (n == 0) {
      throw new InvalidExportException(file, "no OTLP/JSON requests (empty file)");
    }
    scanned = true;
    return n;
  }

  private InvalidExportException bad(String where, String problem) {
    return new InvalidExportException(file, where + ": " + problem);
  }

  /** Reads one root object; returns how many resourceSpans it had. */
  private int readRequest(JsonParser p, Where w, SpanVisitor visitor, boolean record) throws IOException {
    int resources = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken t = p.nextToken();
      if (t != JsonToken.VALUE_NULL && (name.equals("resourceSpans") || name.equals("resource_spans"))) {
        if (t != JsonToken.START_ARRAY) {
          throw bad(w.at(name), "should be an array (line " + line(p) + ")");
        }
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
          w.resource = resources++;
          if (t != JsonToken.START_OBJECT) {
            throw bad(w.at("resourceSpans[" + w.resource + "]"), "should be an object (line " + line(p) + ")");
          }
          readResourceSpans(p, w, visitor, record);
        }
      } else {
        p.skipChildren();
      }
    }
    return resources;
  }

  private void readResourceSpans(JsonParser p, Where w, SpanVisitor visitor, boolean record) throws IOException {
    ResourceGroup g = new ResourceGroup();
    String key = late.isEmpty() && !record ? null : w.request + "/" + w.resource;
    Object[] known = record || key == null ? null : late.get(key);
    if (known != null) {
      g.resource = (Resource) known[0];
      g.schemaUrl = (String) known[1];
    }
    boolean spansSeen = false;
    boolean lateFields = false;
    int scopes = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken t = p.nextToken();
      if (t == JsonToken.VALUE_NULL) {
        continue;
      }
      switch (name) {
        case "resource":
          g.resource = (Resource) message(p, Resource.newBuilder(), w, "resourceSpans[" + w.resource + "].resource");
          lateFields |= spansSeen;
          break;
        case "scopeSpans":
        case "scope_spans":
          if (t != JsonToken.START_ARRAY) {
            throw bad(w.at("resourceSpans[" + w.resource + "]." + name), "should be an array (line " + line(p) + ")");
          }
          while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            w.scope = scopes++;
            if (t != JsonToken.START_OBJECT) {
              throw bad(w.at("resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "]"), "should be an object");
            }
            spansSeen |= readScopeSpans(p, w, g, visitor, record);
          }
          break;
        case "schemaUrl":
        case "schema_url":
          g.schemaUrl = string(p, w, "resourceSpans[" + w.resource + "]." + name);
          lateFields |= spansSeen;
          break;
        default:
          p.skipChildren();
      }
    }
    if (record && lateFields) {
      late.put(key, new Object[] {g.resource, g.schemaUrl});
    }
  }

  /** Reads one scopeSpans object; returns whether it held spans. */
  private boolean readScopeSpans(JsonParser p, Where w, ResourceGroup resource, SpanVisitor visitor, boolean record)
      throws IOException {
    ScopeGroup g = new ScopeGroup(resource);
    String key = late.isEmpty() && !record ? null : w.request + "/" + w.resource + "/" + w.scope;
    Object[] known = record || key == null ? null : late.get(key);
    if (known != null) {
      g.scope = (InstrumentationScope) known[0];
      g.schemaUrl = (String) known[1];
    }
    boolean spansSeen = false;
    boolean lateFields = false;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken t = p.nextToken();
      if (t == JsonToken.VALUE_NULL) {
        continue;
      }
      switch (name) {
        case "scope":
          g.scope = (InstrumentationScope) message(p, InstrumentationScope.newBuilder(), w,
              "resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "].scope");
          lateFields |= spansSeen;
          break;
        case "spans": {
          if (t != JsonToken.START_ARRAY) {
            throw bad(w.at("resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "].spans"),
                "should be an array (line " + line(p) + ")");
          }
          int spans = 0;
          while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            w.span = spans++;
            w.spanLine = line(p);
            w.spanName = null;
            if (t != JsonToken.START_OBJECT) {
              throw bad(w.describe(), "should be an object");
            }
            Span span = readSpan(p, w);
            visitor.span(g, span, w);
            spansSeen = true;
          }
          break;
        }
        case "schemaUrl":
        case "schema_url":
          g.schemaUrl = string(p, w, "resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "]." + name);
          lateFields |= spansSeen;
          break;
        default:
          p.skipChildren();
      }
    }
    if (record && lateFields) {
      late.put(key, new Object[] {g.scope, g.schemaUrl});
    }
    return spansSeen;
  }

  private String string(JsonParser p, Where w, String path) throws IOException {
    if (p.currentToken().isStructStart()) {
      throw bad(w.at(path), "should be a string (line " + line(p) + ")");
    }
    return p.getText();
  }

  private Message message(JsonParser p, Message.Builder b, Where w, String path) throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw bad(w.at(path), "should be an object (line " + line(p) + ")");
    }
    try {
      readMessage(p, b);
    } catch (Problem e) {
      throw bad(w.at(path), e.getMessage() + " (line " + line(p) + ")");
    }
    return b.build();
  }

  /** Reads and checks one span, the parser on its START_OBJECT. */
  private Span readSpan(JsonParser p, Where w) throws IOException {
    JsonStreamContext context = p.getParsingContext();
    Span.Builder b = Span.newBuilder();
    try {
      readMessage(p, b);
    } catch (Problem e) {
      int at = line(p);
      w.spanName = b.getName().isEmpty() ? nameAfterProblem(p, context) : b.getName();
      throw bad(w.describe(), e.getMessage() + (at == w.spanLine ? "" : " (line " + at + ")"));
    }
    Span span = b.build();
    w.spanName = span.getName();
    String problem = problem(span);
    if (problem != null) {
      throw bad(w.describe(), problem);
    }
    return span;
  }

  /** What makes a span unusable, or null: ids and times every reader of the store relies on. */
  private static String problem(Span s) {
    if (s.getTraceId().isEmpty()) {
      return "traceId is missing";
    }
    if (allZero(s.getTraceId())) {
      return "traceId is all zeros (an invalid trace id)";
    }
    if (s.getSpanId().isEmpty()) {
      return "spanId is missing";
    }
    if (allZero(s.getSpanId())) {
      return "spanId is all zeros (an invalid span id)";
    }
    long start = s.getStartTimeUnixNano(); // not negative: see integer()
    long end = s.getEndTimeUnixNano();
    if (start == 0) {
      return "startTimeUnixNano is missing or 0";
    }
    if (end == 0) {
      return "endTimeUnixNano is missing or 0 (startTimeUnixNano " + start + ")";
    }
    if (end < start) {
      return "endTimeUnixNano " + end + " is before startTimeUnixNano " + start + " (by " + (start - end) + " ns)";
    }
    for (int i = 0; i < s.getAttributesCount(); i++) {
      // GPU activity spans land in gpu_kernels too, whose Device and Stream columns are narrower than OTLP's int64
      KeyValue kv = s.getAttributes(i);
      if (kv.getValue().getValueCase() == AnyValue.ValueCase.INT_VALUE) {
        long v = kv.getValue().getIntValue();
        if (kv.getKey().equals(LlmlatAttributes.GPU_DEVICE) && !Limits.fitsDevice(v)) {
          return "attributes[" + i + "] " + LlmlatAttributes.GPU_DEVICE + ": " + Limits.device(v);
        }
        if (kv.getKey().equals(LlmlatAttributes.GPU_STREAM) && !Limits.fitsUint32(v)) {
          return "attributes[" + i + "] " + LlmlatAttributes.GPU_STREAM + ": " + Limits.stream(v);
        }
      }
    }
    return null;
  }

  private static boolean allZero(ByteString b) {
    for (int i = 0; i < b.size(); i++) {
      if (b.byteAt(i) != 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * After a bad value inside a span: the span's name if it comes later in the object (the name makes
   * the message findable), read by skipping to the span's own fields. Null when there is none.
   */
  private static String nameAfterProblem(JsonParser p, JsonStreamContext span) {
    try {
      JsonToken t = p.currentToken();
      while (true) {
        JsonStreamContext c = p.getParsingContext();
        if (t == null || (c != span && c == span.getParent())) {
          return null; // the span ended
        }
        if (c == span && t == JsonToken.FIELD_NAME && "name".equals(p.currentName())) {
          t = p.nextToken();
          return t == JsonToken.VALUE_STRING ? p.getText() : null;
        }
        t = p.nextToken();
      }
    } catch (IOException e) {
      return null; // the file is bad further on; the first problem is the one to report
    }
  }

  private static int line(JsonParser p) {
    return p.currentTokenLocation().getLineNr();
  }

  private static void readMessage(JsonParser p, Message.Builder b) throws IOException, Problem {
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

  /** {@code e} of a value of {@code field}: {@code field: problem}, or {@code field.nested: problem}. */
  private static Problem within(String field, Problem e) {
    String m = e.getMessage();
    return new Problem(field + (m.startsWith(":") ? "" : ".") + m);
  }

  /** A message's fields by JSON name and by proto name, built once per message type. */
  private static Map<String, FieldDescriptor> fields(Descriptor d) {
    return FIELDS.computeIfAbsent(d, k -> {
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
  private static Object value(JsonParser p, Message.Builder parent, FieldDescriptor f) throws IOException, Problem {
    JsonToken v = p.currentToken();
    switch (f.getJavaType()) {
      case MESSAGE: {
        if (v != JsonToken.START_OBJECT) {
          p.skipChildren();
          throw new Problem(": should be an object");
        }
        Message.Builder child = parent.newBuilderForField(f);
        readMessage(p, child);
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
        if (v == JsonToken.VALUE_STRING && (p.getText().equals("true") || p.getText().equals("false"))) {
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
      case ENUM: {
        EnumValueDescriptor e = v == JsonToken.VALUE_NUMBER_INT
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
  private static ByteString bytes(JsonParser p, JsonToken v, FieldDescriptor f) throws IOException, Problem {
    if (v != JsonToken.VALUE_STRING) {
      p.skipChildren();
      throw new Problem(": expected a string, got " + v);
    }
    String s = p.getText();
    int size = switch (f.getName()) {
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
      throw new Problem(": '" + clip(s) + "' is " + s.length() + " characters, not " + 2 * size + " hex digits");
    }
    try {
      return ByteString.copyFrom(HEX.parseHex(s));
    } catch (IllegalArgumentException e) {
      throw new Problem(": '" + clip(s) + "' is not hex");
    }
  }

  /**
   * An integer, number or string, checked against its field's type: int32 and uint32 ranges, no
   * negative unsigned value, nothing past 2^64; a {@code ...TimeUnixNano} no later than a long's Unix
   * ns (2262). Unsigned 64-bit values above 2^63 keep their bit pattern (a negative long).
   */
  private static long integer(JsonParser p, JsonToken v, FieldDescriptor f) throws IOException, Problem {
    FieldDescriptor.Type type = f.getType();
    boolean unsigned = type == FieldDescriptor.Type.UINT32 || type == FieldDescriptor.Type.FIXED32
        || type == FieldDescriptor.Type.UINT64 || type == FieldDescriptor.Type.FIXED64;
    boolean wide = f.getJavaType() == FieldDescriptor.JavaType.LONG;
    long value;
    String text;
    if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
      value = p.getLongValue(); // the common case: no text, no allocation
      text = null;
    } else if (v == JsonToken.VALUE_STRING && (value = parseLong(text = p.getText().trim())) != NOT_A_LONG) {
      // the other common case: int64 as a string, as the OTLP spec writes them
    } else {
      BigInteger big;
      text = p.getText().trim();
      try {
        if (v == JsonToken.VALUE_NUMBER_INT) {
          big = p.getBigIntegerValue();
        } else if (v == JsonToken.VALUE_NUMBER_FLOAT || v == JsonToken.VALUE_STRING) {
          BigDecimal d = new BigDecimal(text); // "1e3" is an integer too, as protobuf's JSON reads it
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
      if (big.signum() < 0 ? big.bitLength() > 63 : big.bitLength() > (unsigned && wide ? 64 : 63)) {
        throw new Problem(": " + clip(text) + (f.getName().endsWith("time_unix_nano") && big.signum() > 0
            ? " ns " + Limits.PAST_2262 : " does not fit " + typeName(f)));
      }
      value = big.longValue();
      if (unsigned && wide && big.signum() > 0 && value < 0 && !f.getName().endsWith("time_unix_nano")) {
        return value; // above 2^63: the bit pattern
      }
    }
    if (unsigned && value < 0) {
      throw new Problem(": " + (text == null ? value : text) + (value < 0 && text != null && !text.startsWith("-")
          ? " ns " + Limits.PAST_2262 : " is negative (" + typeName(f) + ")"));
    }
    if (!wide && (unsigned ? value > Limits.UINT32_MAX : value != (int) value)) {
      throw new Problem(": " + value + " does not fit " + typeName(f));
    }
    return value;
  }

  private static final long NOT_A_LONG = Long.MIN_VALUE;

  /** {@code s} as a long when it is plain digits with an optional '-' that fit, else {@link #NOT_A_LONG}. */
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
    return f.getType().name().toLowerCase(java.util.Locale.ROOT);
  }

  private static String clip(String s) {
    return s.length() > 64 ? s.substring(0, 64) + "..." : s;
  }

  /** Puts the spans of one root object back together as a request, for {@link Visitor}s. */
  private static final class Collector implements SpanVisitor {
    private final Visitor visitor;
    private final Map<ResourceGroup, Map<ScopeGroup, List<Span>>> groups = new IdentityHashMap<>();
    private final List<ResourceGroup> order = new ArrayList<>();

    Collector(Visitor visitor) {
      this.visitor = visitor;
    }

    @Override
    public void span(ScopeGroup group, Span span, Where where) {
      groups.computeIfAbsent(group.resource, k -> {
        order.add(k);
        return new java.util.LinkedHashMap<>();
      }).computeIfAbsent(group, k -> new ArrayList<>()).add(span);
    }

    @Override
    public void endRequest() {
      ExportTraceServiceRequest.Builder request = ExportTraceServiceRequest.newBuilder();
      for (ResourceGroup r : order) {
        ResourceSpans.Builder rs = ResourceSpans.newBuilder().setResource(r.resource).setSchemaUrl(r.schemaUrl);
        groups.get(r).forEach((s, spans) -> rs.addScopeSpans(ScopeSpans.newBuilder().setScope(s.scope)
            .setSchemaUrl(s.schemaUrl).addAllSpans(spans)));
        request.addResourceSpans(rs);
      }
      groups.clear();
      order.clear();
      visitor.request(request.build());
    }
  }
}
