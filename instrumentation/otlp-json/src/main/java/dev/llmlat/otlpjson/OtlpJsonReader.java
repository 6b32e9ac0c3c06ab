package dev.llmlat.otlpjson;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.google.protobuf.Message;
import dev.llmlat.otlpjson.internal.Batcher;
import dev.llmlat.otlpjson.internal.JsonInput;
import dev.llmlat.otlpjson.internal.MessageReader;
import dev.llmlat.otlpjson.internal.RequestCollector;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads an OTLP/JSON file (the Collector's file exporter, the OTLP/HTTP JSON encoding; plain or
 * gzip) as OTLP protobuf: consecutive root objects, one {@code ExportTraceServiceRequest} per line
 * or one document. JSON as the OTLP spec writes it: trace and span ids in hex, enums as names or
 * integers, 64-bit integers as numbers or strings, lowerCamelCase keys (snake_case accepted);
 * unknown fields are skipped, and every OTLP trace field is read.
 *
 * <p>Streams: {@code resourceSpans[].scopeSpans[].spans[]} are walked with a streaming parser and
 * each span is built and handed over alone with its {@link ScopeGroup}, so a file holding one huge
 * request takes memory per span, not per file. Where a file puts a resource or scope (or their
 * {@code schemaUrl}, as the Collector does) after its spans, the first read notes them and later
 * reads by the same reader know them before the first span; a two-pass import (check, then emit)
 * reads with one reader.
 *
 * <p>Every value is checked as it is read, and a bad one fails the file with an {@link
 * InvalidOtlpJsonException} naming the request, the span (position, name, line) and the field: ids
 * that are no hex of the right length, all-zero or missing trace and span ids, integers out of
 * their field's range, times past 2262 (a long's Unix ns), a start that is missing or 0, an end
 * before the start, a GPU device or stream id that does not fit the store's {@code gpu_kernels}.
 *
 * <pre>{@code
 * List<ExportTraceServiceRequest> requests = new ArrayList<>();
 * new OtlpJsonReader(Path.of("traces.jsonl")).readRequests(requests::add);
 * }</pre>
 *
 * Not thread-safe: one read at a time.
 */
public final class OtlpJsonReader {
  private final Path file;

  /**
   * Resources and scopes (with their schemaUrl) that came after spans of theirs, by position
   * ({@code request/resource} or {@code request/resource/scope}): recorded by the first read, used
   * by the later ones. Only these are kept, so memory stays small for files that put them first.
   */
  private final Map<String, Object[]> late = new HashMap<>();

  private boolean scanned;

  public OtlpJsonReader(Path file) {
    this.file = file;
  }

  public Path file() {
    return file;
  }

  /**
   * Reads the file whole, handing over each request (root object) as it ends: for small files and
   * tests.
   */
  public long readRequests(Consumer<ExportTraceServiceRequest> requests)
      throws InvalidOtlpJsonException {
    return read(ReadProgress.NONE, 0, 0, new RequestCollector(requests));
  }

  /** {@link #read(ReadProgress, long, long, SpanVisitor)} without progress. */
  public long read(SpanVisitor visitor) throws InvalidOtlpJsonException {
    return read(ReadProgress.NONE, 0, 0, visitor);
  }

  /**
   * Reads the spans regrouped into requests of at most {@code batchSize} spans, each span under its
   * own resource and scope; a request of the file ends a batch, so small requests stay one each. A
   * batch is handed over before the resource or scope that a file puts after its spans can have
   * been read, so a reader that has not read the file yet reads it once first (without progress) to
   * learn them; a caller that checks the file with {@link #read} first, as a two-pass import does,
   * pays nothing more.
   *
   * @return how many requests (root objects) the file holds
   */
  public long readBatches(
      int batchSize,
      ReadProgress progress,
      long base,
      long total,
      Consumer<ExportTraceServiceRequest> batches)
      throws InvalidOtlpJsonException {
    Batcher batcher = new Batcher(batchSize, batches);
    if (!scanned) {
      read((group, span, where) -> {});
    }
    return read(
        progress,
        base,
        total,
        new SpanVisitor() {
          @Override
          public void span(ScopeGroup group, Span span, SpanPosition where) {
            batcher.add(group, span);
          }

          @Override
          public void endRequest() {
            batcher.flush();
          }
        });
  }

  /**
   * Reads consecutive root objects, handing over each span with its resource and scope.
   *
   * @param progress told {@code base + bytes read} of {@code total}: a caller reading the file
   *     twice reports one bar over both reads (0 and 2 × size, then size and 2 × size)
   * @return how many root objects (requests) there were
   * @throws InvalidOtlpJsonException at the first problem; spans before it were handed over
   */
  public long read(ReadProgress progress, long base, long total, SpanVisitor visitor)
      throws InvalidOtlpJsonException {
    boolean record = !scanned;
    long n = 0;
    SpanPosition w = new SpanPosition();
    try (JsonParser p = JsonInput.parser(file, progress, base, total)) {
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        w.request = n + 1;
        w.requestLine = p.currentTokenLocation().getLineNr();
        if (t != JsonToken.START_OBJECT) {
          throw new InvalidOtlpJsonException(
              file,
              "OTLP/JSON request " + w.request + " is not an object (line " + w.requestLine + ")");
        }
        if (readRequest(p, w, visitor, record) == 0) {
          throw new InvalidOtlpJsonException(
              file,
              "OTLP/JSON request "
                  + w.request
                  + " has no resourceSpans (line "
                  + w.requestLine
                  + ")");
        }
        visitor.endRequest();
        n++;
      }
    } catch (IOException e) {
      throw InputFiles.invalid(file, e);
    }
    if (n == 0) {
      throw new InvalidOtlpJsonException(file, "no OTLP/JSON requests (empty file)");
    }
    scanned = true;
    return n;
  }

  private InvalidOtlpJsonException bad(String where, String problem) {
    return new InvalidOtlpJsonException(file, where + ": " + problem);
  }

  /** Reads one root object; returns how many resourceSpans it had. */
  private int readRequest(JsonParser p, SpanPosition w, SpanVisitor visitor, boolean record)
      throws IOException {
    int resources = 0;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      JsonToken t = p.nextToken();
      if (t != JsonToken.VALUE_NULL
          && (name.equals("resourceSpans") || name.equals("resource_spans"))) {
        if (t != JsonToken.START_ARRAY) {
          throw bad(w.at(name), "should be an array (line " + line(p) + ")");
        }
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
          w.resource = resources++;
          if (t != JsonToken.START_OBJECT) {
            throw bad(
                w.at("resourceSpans[" + w.resource + "]"),
                "should be an object (line " + line(p) + ")");
          }
          readResourceSpans(p, w, visitor, record);
        }
      } else {
        p.skipChildren();
      }
    }
    return resources;
  }

  private void readResourceSpans(JsonParser p, SpanPosition w, SpanVisitor visitor, boolean record)
      throws IOException {
    ResourceGroup g = new ResourceGroup();
    String key = late.isEmpty() && !record ? null : w.request + "/" + w.resource;
    Object[] known = record || key == null ? null : late.get(key);
    if (known != null) {
      g.resource((Resource) known[0]);
      g.schemaUrl((String) known[1]);
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
          g.resource(
              (Resource)
                  message(
                      p, Resource.newBuilder(), w, "resourceSpans[" + w.resource + "].resource"));
          lateFields |= spansSeen;
          break;
        case "scopeSpans":
        case "scope_spans":
          if (t != JsonToken.START_ARRAY) {
            throw bad(
                w.at("resourceSpans[" + w.resource + "]." + name),
                "should be an array (line " + line(p) + ")");
          }
          while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            w.scope = scopes++;
            if (t != JsonToken.START_OBJECT) {
              throw bad(
                  w.at("resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "]"),
                  "should be an object");
            }
            spansSeen |= readScopeSpans(p, w, g, visitor, record);
          }
          break;
        case "schemaUrl":
        case "schema_url":
          g.schemaUrl(string(p, w, "resourceSpans[" + w.resource + "]." + name));
          lateFields |= spansSeen;
          break;
        default:
          p.skipChildren();
      }
    }
    if (record && lateFields) {
      late.put(key, new Object[] {g.resource(), g.schemaUrl()});
    }
  }

  /** Reads one scopeSpans object; returns whether it held spans. */
  private boolean readScopeSpans(
      JsonParser p, SpanPosition w, ResourceGroup resource, SpanVisitor visitor, boolean record)
      throws IOException {
    ScopeGroup g = new ScopeGroup(resource);
    String key = late.isEmpty() && !record ? null : w.request + "/" + w.resource + "/" + w.scope;
    Object[] known = record || key == null ? null : late.get(key);
    if (known != null) {
      g.scope((InstrumentationScope) known[0]);
      g.schemaUrl((String) known[1]);
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
          g.scope(
              (InstrumentationScope)
                  message(
                      p,
                      InstrumentationScope.newBuilder(),
                      w,
                      "resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "].scope"));
          lateFields |= spansSeen;
          break;
        case "spans":
          {
            if (t != JsonToken.START_ARRAY) {
              throw bad(
                  w.at("resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "].spans"),
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
          g.schemaUrl(
              string(
                  p, w, "resourceSpans[" + w.resource + "].scopeSpans[" + w.scope + "]." + name));
          lateFields |= spansSeen;
          break;
        default:
          p.skipChildren();
      }
    }
    if (record && lateFields) {
      late.put(key, new Object[] {g.scope(), g.schemaUrl()});
    }
    return spansSeen;
  }

  private String string(JsonParser p, SpanPosition w, String path) throws IOException {
    if (p.currentToken().isStructStart()) {
      throw bad(w.at(path), "should be a string (line " + line(p) + ")");
    }
    return p.getText();
  }

  private Message message(JsonParser p, Message.Builder b, SpanPosition w, String path)
      throws IOException {
    if (p.currentToken() != JsonToken.START_OBJECT) {
      throw bad(w.at(path), "should be an object (line " + line(p) + ")");
    }
    try {
      MessageReader.read(p, b);
    } catch (MessageReader.Problem e) {
      throw bad(w.at(path), e.getMessage() + " (line " + line(p) + ")");
    }
    return b.build();
  }

  /** Reads and checks one span, the parser on its START_OBJECT. */
  private Span readSpan(JsonParser p, SpanPosition w) throws IOException {
    JsonStreamContext context = p.getParsingContext();
    Span.Builder b = Span.newBuilder();
    try {
      MessageReader.read(p, b);
    } catch (MessageReader.Problem e) {
      int at = line(p);
      w.spanName = b.getName().isEmpty() ? nameAfterProblem(p, context) : b.getName();
      throw bad(w.describe(), e.getMessage() + (at == w.spanLine ? "" : " (line " + at + ")"));
    }
    Span span = b.build();
    w.spanName = span.getName();
    String problem = SpanCheck.problem(span);
    if (problem != null) {
      throw bad(w.describe(), problem);
    }
    return span;
  }

  /**
   * After a bad value inside a span: the span's name if it comes later in the object (the name
   * makes the message findable), read by skipping to the span's own fields. Null when there is
   * none.
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
}
