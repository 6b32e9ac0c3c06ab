package dev.llmlat.gpu.internal;

import io.opentelemetry.proto.common.v1.KeyValue;

/**
 * Wire tags of the OTLP {@code Span} fields the importers write by hand, and attribute fields
 * encoded once.
 */
final class SpanFields {
  static final int TRACE_ID = ProtoWriter.lenTag(1);
  static final int SPAN_ID = ProtoWriter.lenTag(2);
  static final int PARENT_SPAN_ID = ProtoWriter.lenTag(4);
  static final int NAME = ProtoWriter.lenTag(5);
  static final int KIND = 6 << 3; // varint
  static final int START_TIME = 7 << 3 | 1; // fixed64
  static final int END_TIME = 8 << 3 | 1; // fixed64
  static final int ATTRIBUTES = ProtoWriter.lenTag(9);

  private SpanFields() {}

  /** {@code kv} as a whole {@code attributes} field of a span: tag, length, KeyValue. */
  static byte[] attribute(KeyValue kv) {
    byte[] body = kv.toByteArray();
    ProtoWriter w = new ProtoWriter(1 + ProtoWriter.varintSize(body.length) + body.length);
    w.lengthDelimited(ATTRIBUTES, body, 0, body.length);
    return w.array();
  }
}
