package dev.llmlat.attribution;

/**
 * A span's identity within what was read: its trace and span id. A map key of its own, not the two
 * ids concatenated, so that a lookup builds no string and hashes no 48 characters.
 */
record SpanKey(String traceId, String spanId) {
  static SpanKey of(SpanRecord s) {
    return new SpanKey(s.traceId(), s.spanId());
  }

  /** The key of {@code s}'s parent span. */
  static SpanKey parentOf(SpanRecord s) {
    return new SpanKey(s.traceId(), s.parentSpanId());
  }

  // written out: a record's generated equals and hashCode go through method handles the JIT may not
  // inline here

  @Override
  public boolean equals(Object o) {
    return o instanceof SpanKey k && spanId.equals(k.spanId) && traceId.equals(k.traceId);
  }

  @Override
  public int hashCode() {
    return 31 * traceId.hashCode() + spanId.hashCode();
  }
}
