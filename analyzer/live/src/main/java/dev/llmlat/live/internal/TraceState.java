package dev.llmlat.live.internal;

import dev.llmlat.store.RowBinaryReader;
import dev.llmlat.store.RowBinaryWriter;

/**
 * What the assembler knows of one trace besides its spans: when its last span came (and was sent),
 * whether it holds a request (an engine's, or only a gateway's so far), when it was attributed and
 * how often, and its one timer (when, and what for).
 */
final class TraceState {
  /** The timer attributes the trace (its grace passed) ... */
  static final int ATTRIBUTE = 1;

  /** ... or drops it (its retention passed). */
  static final int EXPIRE = 2;

  long lastArrivalMs;
  boolean engineRequest;
  boolean gatewayRequest;
  int attributions;
  long attributedAtMs;

  /** The timer: when it fires (a key of the timers store) and what for. */
  long dueMs;

  int dueKind;

  /**
   * When the trace is really due: later than {@link #dueMs} when spans came since the timer was
   * set.
   */
  long readyMs;

  /** Records (batches of its own spans, or shared spans) it received. */
  int records;

  /** The latest timestamp of its records (when their producers sent them). */
  long lastRecordMs;

  byte[] encode() {
    RowBinaryWriter out = new RowBinaryWriter(56);
    out.int64(lastArrivalMs)
        .varUInt((engineRequest ? 1 : 0) | (gatewayRequest ? 2 : 0))
        .varUInt(attributions)
        .int64(attributedAtMs)
        .int64(dueMs)
        .varUInt(dueKind)
        .int64(readyMs)
        .varUInt(records)
        .int64(lastRecordMs);
    return out.toByteArray();
  }

  static TraceState decode(byte[] bytes) {
    RowBinaryReader in = new RowBinaryReader(bytes);
    TraceState s = new TraceState();
    s.lastArrivalMs = in.int64();
    int flags = (int) in.varUInt();
    s.engineRequest = (flags & 1) != 0;
    s.gatewayRequest = (flags & 2) != 0;
    s.attributions = (int) in.varUInt();
    s.attributedAtMs = in.int64();
    s.dueMs = in.int64();
    s.dueKind = (int) in.varUInt();
    s.readyMs = in.int64();
    s.records = (int) in.varUInt();
    s.lastRecordMs =
        in.hasMore() ? in.int64() : 0; // absent from states written before it was kept: due at once
    return s;
  }
}
