package dev.llmlat.otlpjson;

import com.google.protobuf.ByteString;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.Span;

/**
 * Whether an OTLP span is usable, one rule for every way spans arrive (files, Kafka records): the
 * ids and times every reader of the store relies on (times are unsigned in OTLP: past 2^63, the
 * year 2262, they would wrap in the store's Int64 columns), and GPU device and stream ids that fit
 * {@code gpu_kernels} (schemas/clickhouse/0002_gpu_kernels.sql), whose Device and Stream columns
 * are narrower than OTLP's int64; ClickHouse would wrap a value outside (device 70000 stored as
 * 4464), so it is refused.
 */
public final class SpanCheck {
  /** {@code gpu_kernels.Device UInt16}. */
  static final long DEVICE_MAX = 0xFFFF;

  /** {@code gpu_kernels.Stream UInt32}; also OTLP's uint32 fields. */
  public static final long UINT32_MAX = 0xFFFF_FFFFL;

  private SpanCheck() {}

  /** What makes the span unusable, in words naming the field, or null. */
  public static String problem(Span s) {
    if (s.getTraceId().isEmpty()) {
      return "traceId is missing";
    }
    if (s.getTraceId().size() != 16) {
      return "traceId has " + s.getTraceId().size() + " bytes (OTLP needs 16)";
    }
    if (allZero(s.getTraceId())) {
      return "traceId is all zeros (an invalid trace id)";
    }
    if (s.getSpanId().isEmpty()) {
      return "spanId is missing";
    }
    if (s.getSpanId().size() != 8) {
      return "spanId has " + s.getSpanId().size() + " bytes (OTLP needs 8)";
    }
    if (allZero(s.getSpanId())) {
      return "spanId is all zeros (an invalid span id)";
    }
    long start = s.getStartTimeUnixNano();
    long end = s.getEndTimeUnixNano();
    if (start == 0) {
      return "startTimeUnixNano is missing or 0";
    }
    if (start < 0) {
      return "startTimeUnixNano " + Long.toUnsignedString(start) + " is past year 2262";
    }
    if (end < 0) {
      return "endTimeUnixNano " + Long.toUnsignedString(end) + " is past year 2262";
    }
    if (end == 0) {
      return "endTimeUnixNano is missing or 0 (startTimeUnixNano " + start + ")";
    }
    if (end < start) {
      return "endTimeUnixNano "
          + end
          + " is before startTimeUnixNano "
          + start
          + " (by "
          + (start - end)
          + " ns)";
    }
    for (int i = 0; i < s.getAttributesCount(); i++) {
      KeyValue kv = s.getAttributes(i);
      if (kv.getValue().getValueCase() == AnyValue.ValueCase.INT_VALUE) {
        long v = kv.getValue().getIntValue();
        if (kv.getKey().equals(LlmlatAttributes.GPU_DEVICE) && (v & ~DEVICE_MAX) != 0) {
          return "attributes["
              + i
              + "] "
              + LlmlatAttributes.GPU_DEVICE
              + ": "
              + v
              + " does not fit gpu_kernels.Device (UInt16: 0 to 65535)";
        }
        if (kv.getKey().equals(LlmlatAttributes.GPU_STREAM) && (v & ~UINT32_MAX) != 0) {
          return "attributes["
              + i
              + "] "
              + LlmlatAttributes.GPU_STREAM
              + ": "
              + v
              + " does not fit gpu_kernels.Stream (UInt32: 0 to 4294967295)";
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
}
