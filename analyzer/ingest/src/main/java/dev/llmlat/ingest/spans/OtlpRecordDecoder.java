package dev.llmlat.ingest.spans;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.llmlat.otlpjson.SpanCheck;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * Decodes one Kafka record value as an OTLP {@code ExportTraceServiceRequest} (protobuf) and checks
 * it is one: protobuf happily parses many byte strings as messages of unknown fields, so a record
 * must carry spans, each passing {@link SpanCheck} (the rule files are read by too).
 */
public final class OtlpRecordDecoder {
  private OtlpRecordDecoder() {}

  /** Why a record is not a span batch. */
  public static final class InvalidRecordException extends Exception {
    private static final long serialVersionUID = 1L;

    public InvalidRecordException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  public static ExportTraceServiceRequest decode(byte[] value) throws InvalidRecordException {
    if (value == null || value.length == 0) {
      throw new InvalidRecordException(
          "empty record value (expected an OTLP ExportTraceServiceRequest)", null);
    }
    ExportTraceServiceRequest request;
    try {
      request = ExportTraceServiceRequest.parseFrom(value);
    } catch (InvalidProtocolBufferException e) {
      throw new InvalidRecordException(
          "not an OTLP ExportTraceServiceRequest protobuf: " + e.getMessage(), e);
    }
    int spans = 0;
    for (ResourceSpans rs : request.getResourceSpansList()) {
      for (ScopeSpans ss : rs.getScopeSpansList()) {
        for (Span span : ss.getSpansList()) {
          check(span);
          spans++;
        }
      }
    }
    if (spans == 0) {
      throw new InvalidRecordException(
          "no spans in the record ("
              + value.length
              + " bytes"
              + (request.getUnknownFields().asMap().isEmpty()
                  ? ""
                  : ", fields unknown to OTLP trace export")
              + ")",
          null);
    }
    return request;
  }

  /** The one span rule ({@link SpanCheck}); the message names the span. */
  private static void check(Span span) throws InvalidRecordException {
    String problem = SpanCheck.problem(span);
    if (problem != null) {
      throw new InvalidRecordException("span '" + span.getName() + "': " + problem, null);
    }
  }
}
