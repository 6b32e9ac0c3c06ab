package dev.llmlat.live.internal;

import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.apache.kafka.common.utils.Bytes;

/**
 * State store keys as bytes that sort the way the assembler scans them: a trace's spans together
 * (trace id first), timers by due time (big-endian milliseconds first).
 */
final class StoreKeys {
  private static final HexFormat HEX = HexFormat.of();
  static final int TRACE = 16;
  static final int SPAN = 8;

  private StoreKeys() {}

  static Bytes trace(String traceId) {
    return Bytes.wrap(HEX.parseHex(traceId));
  }

  static String traceId(byte[] key, int offset) {
    return HEX.formatHex(key, offset, offset + TRACE);
  }

  /** A span of {@code traceId}'s assembly: the trace, then the span's own trace and id. */
  static Bytes span(String traceId, String spanTraceId, String spanId) {
    return Bytes.wrap(
        ByteBuffer.allocate(2 * TRACE + SPAN)
            .put(HEX.parseHex(traceId))
            .put(HEX.parseHex(spanTraceId))
            .put(HEX.parseHex(spanId))
            .array());
  }

  /** A shared span: its own trace and id (the tail of its {@link #span} keys). */
  static Bytes shared(String spanTraceId, String spanId) {
    return Bytes.wrap(
        ByteBuffer.allocate(TRACE + SPAN)
            .put(HEX.parseHex(spanTraceId))
            .put(HEX.parseHex(spanId))
            .array());
  }

  static Bytes sharedOf(Bytes spanKey) {
    byte[] k = spanKey.get();
    return Bytes.wrap(java.util.Arrays.copyOfRange(k, TRACE, k.length));
  }

  static Bytes timer(long dueMs, String traceId) {
    return Bytes.wrap(
        ByteBuffer.allocate(8 + TRACE).putLong(dueMs).put(HEX.parseHex(traceId)).array());
  }

  /** Every timer due at or before {@code nowMs} lies in [{@code timer(0, 0...)}, this]. */
  static Bytes lastTimerAt(long nowMs) {
    byte[] k = ByteBuffer.allocate(8 + TRACE).putLong(nowMs).array();
    java.util.Arrays.fill(k, 8, k.length, (byte) 0xFF);
    return Bytes.wrap(k);
  }

  static long timerDue(Bytes key) {
    return ByteBuffer.wrap(key.get()).getLong();
  }
}
