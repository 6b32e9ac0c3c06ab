package dev.llmlat.spans;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * Decodes one Kafka record value as an OTLP {@code ExportTraceServiceRequest} (protobuf) and
 * checks it is one: protobuf happily parses many byte strings as messages of unknown fields, so a
 * record must carry spans with 16-byte trace ids and 8-byte span ids.
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
      throw new InvalidRecordException("empty record value (expected an OTLP ExportTraceServiceRequest)", null);
    }
    ExportTraceServiceRequest request;
    try {
      request = ExportTraceServiceRequest.parseFrom(value);
    } catch (InvalidProtocolBufferException e) {
      throw new InvalidRecordException("not an OTLP ExportTraceServiceRequest protobuf: " + e.getMessage(), e);
    }
    int spans = 0;
    for (ResourceSpans rs : request.getResourceSpansList()) {
      for (ScopeSpans ss : rs.getScopeSpansList()) {
        for (Span span : ss.getSpansList()) {
          if (span.getTraceId().size() != 16) {
            throw new InvalidRecordException("span '" + span.getName() + "' has a " + span.getTraceId().size()
                + "-byte trace id (OTLP needs 16)", null);
          }
          if (span.getSpanId().size() != 8) {
            throw new InvalidRecordException("span '" + span.getName() + "' has a " + span.getSpanId().size()
                + "-byte span id (OTLP needs 8)", null);
          }
          spans++;
        }
      }
    }
    if (spans == 0) {
      throw new InvalidRecordException("no spans in the record (" + value.length + " bytes"
          + (request.getUnknownFields().asMap().isEmpty() ? "" : ", fields unknown to OTLP trace export") + ")", null);
    }
    return request;
  }
}
