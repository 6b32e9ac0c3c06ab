package dev.llmlat.otlpjson;

/**
 * Where a span is in the file: its request (root object) and the request's line, its indexes under
 * {@code resourceSpans[].scopeSpans[].spans[]}, its name and line. Valid during a {@link
 * SpanVisitor} call only: the reader moves it on to the next span.
 */
public final class SpanPosition {
  long request;
  int requestLine;
  int resource;
  int scope;
  int span;
  int spanLine;
  String spanName;

  SpanPosition() {}

  /** {@code request 2 (line 2), resourceSpans[0].scopeSpans[0].spans[5] 'GET /x' (line 2)}. */
  public String describe() {
    return "request "
        + request
        + " (line "
        + requestLine
        + "), resourceSpans["
        + resource
        + "].scopeSpans["
        + scope
        + "].spans["
        + span
        + "]"
        + (spanName == null || spanName.isEmpty() ? "" : " '" + spanName + "'")
        + " (line "
        + spanLine
        + ")";
  }

  /** {@code path} in the current request: {@code request 2 (line 2), resourceSpans[0].resource}. */
  String at(String path) {
    return "request " + request + " (line " + requestLine + "), " + path;
  }

  @Override
  public String toString() {
    return describe();
  }
}
