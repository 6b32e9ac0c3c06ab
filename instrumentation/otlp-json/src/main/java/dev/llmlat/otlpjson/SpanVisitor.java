package dev.llmlat.otlpjson;

import io.opentelemetry.proto.trace.v1.Span;

/**
 * Receives the spans of an OTLP/JSON file in file order, each checked, with its resource and scope.
 */
public interface SpanVisitor {
  /**
   * @param where valid during this call only
   */
  void span(ScopeGroup group, Span span, SpanPosition where);

  /** After the last span of a root object (one request). */
  default void endRequest() {}
}
