package dev.llmlat.load;

/**
 * Why a request failed: its kind (counted per kind in the summary) and the detail (the span's
 * status message). The detail is the server's or the transport's words, cut short; never the prompt
 * or the completion.
 *
 * @param kind what went wrong
 * @param httpStatus the response status for {@link Kind#HTTP}, else 0
 * @param detail what the server or the transport said
 */
public record Failure(Kind kind, int httpStatus, String detail) {
  private static final int MAX_DETAIL = 300;

  /** What went wrong, each counted apart. */
  public enum Kind {
    /** The server answered with a status other than 200. */
    HTTP("http"),
    /** Nothing listens at the address. */
    CONNECTION_REFUSED("connection_refused"),
    /** No connection within the connect timeout. */
    CONNECT_TIMEOUT("connect_timeout"),
    /** The response did not end within --timeout. */
    TIMEOUT("timeout"),
    /** The connection broke (reset, closed early, TLS). */
    CONNECTION("connection_error"),
    /** The stream carried an error object. */
    STREAM_ERROR("stream_error"),
    /** An event that is not the JSON of a completion chunk. */
    BAD_STREAM("bad_stream"),
    /** The stream ended without a content chunk. */
    NO_CONTENT("no_content"),
    /** Stopped in flight (Ctrl-C). */
    CANCELLED("cancelled"),
    /**
     * Something llmlat did not foresee (a bug, or input the HTTP client chokes on): named, never a
     * stack trace.
     */
    INTERNAL("internal");

    private final String type;

    Kind(String type) {
      this.type = type;
    }

    /** A low-cardinality identifier, as OpenTelemetry's {@code error.type} wants one. */
    public String type() {
      return type;
    }
  }

  public Failure {
    detail =
        detail == null
            ? ""
            : detail.length() <= MAX_DETAIL ? detail : detail.substring(0, MAX_DETAIL - 3) + "...";
  }

  static Failure of(Kind kind, String detail) {
    return new Failure(kind, 0, detail);
  }

  /** An unexpected throwable as an {@link Kind#INTERNAL} failure: its class and message. */
  static Failure internal(Throwable e) {
    String name = e.getClass().getSimpleName();
    return of(Kind.INTERNAL, e.getMessage() == null ? name : name + ": " + e.getMessage());
  }

  /**
   * The span's {@code error.type}: the status code for HTTP failures (OpenTelemetry's HTTP
   * conventions).
   */
  public String errorType() {
    return kind == Kind.HTTP ? Integer.toString(httpStatus) : kind.type();
  }

  /** How the summary counts it: {@code HTTP 503}, {@code timeout}, ... */
  public String label() {
    return kind == Kind.HTTP ? "HTTP " + httpStatus : kind.type().replace('_', ' ');
  }

  /** The whole story in one line. */
  @Override
  public String toString() {
    return detail.isEmpty() ? label() : label() + ": " + detail;
  }
}
