package dev.llmlat.ingest.spans;

import dev.llmlat.semconv.LlmlatAttributes;
import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * Decodes one Kafka record value as an OTLP {@code ExportTraceServiceRequest} (protobuf) and
 * checks it is one: protobuf happily parses many byte strings as messages of unknown fields, so a
 * record must carry spans with 16-byte, not all-zero trace and span ids, a start after 1970 and
 * before 2262 (times are unsigned in OTLP: past 2^63 they would wrap in the store's Int64
 * columns), an end not before the start, and GPU device/stream ids that fit their columns.
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
          check(span);
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

  private static void check(Span span) throws InvalidRecordException {
    String name = "span '" + span.getName() + "'";
    if (allZero(span.getTraceId())) {
      throw new InvalidRecordException(name + " has an all-zero trace id", null);
    }
    if (allZero(span.getSpanId())) {
      throw new InvalidRecordException(name + " has an all-zero span id", null);
    }
    long start = span.getStartTimeUnixNano();
    long end = span.getEndTimeUnixNano();
    if (start <= 0) {
      throw new InvalidRecordException(name + " has startTimeUnixNano " + Long.toUnsignedString(start)
          + (start == 0 ? " (missing)" : " (past year 2262)"), null);
    }
    if (end < 0) {
      throw new InvalidRecordException(name + " has endTimeUnixNano " + Long.toUnsignedString(end) + " (past year 2262)", null);
    }
    if (end < start) {
      throw new InvalidRecordException(name + " ends before it starts (" + end + " < " + start + ")", null);
    }
    for (io.opentelemetry.proto.common.v1.KeyValue kv : span.getAttributesList()) {
      long max = switch (kv.getKey()) {
        case LlmlatAttributes.GPU_DEVICE -> 0xFFFFL; // gpu_kernels.Device UInt16
        case LlmlatAttributes.GPU_STREAM -> 0xFFFF_FFFFL; // gpu_kernels.Stream UInt32
        default -> -1;
      };
      if (max >= 0 && kv.getValue().hasIntValue() && (kv.getValue().getIntValue() < 0 || kv.getValue().getIntValue() > max)) {
        throw new InvalidRecordException(name + " has " + kv.getKey() + " " + kv.getValue().getIntValue() + " (0 to " + max
            + " fit the store)", null);
      }
    }
  }

  private static boolean allZero(com.google.protobuf.ByteString id) {
    for (int i = 0; i < id.size(); i++) {
      if (id.byteAt(i) != 0) {
        return false;
      }
    }
    return true;
  }
}
