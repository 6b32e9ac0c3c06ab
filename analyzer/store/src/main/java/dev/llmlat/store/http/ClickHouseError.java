package dev.llmlat.store.http;

import java.util.Map;
import java.util.Set;

/**
 * An error as ClickHouse's HTTP interface reports it: the text {@code Code: N. DB::Exception:
 * message. (NAME)} that clients parse, the code in {@code X-ClickHouse-Exception-Code}, and the
 * HTTP status ClickHouse gives that code (its exceptionCodeToHTTPStatus; codes it does not list are
 * 500).
 */
record ClickHouseError(int code, String text) {
  static final int BAD_ARGUMENTS = 36;
  static final int SYNTAX_ERROR = 62;
  static final int UNKNOWN_DATABASE = 81;
  static final int UNKNOWN_COMPRESSION_METHOD = 89;
  static final int NO_DATA_TO_INSERT = 108;
  static final int UNKNOWN_SETTING = 115;
  static final int READONLY = 164;
  static final int REQUIRED_PASSWORD = 194;
  static final int TOO_MANY_SIMULTANEOUS_QUERIES = 202;
  static final int QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING = 216;
  static final int QUERY_IS_TOO_LARGE = 229;
  static final int CANNOT_DECOMPRESS = 271;
  static final int SESSION_NOT_FOUND = 372;
  static final int SESSION_IS_LOCKED = 373;
  static final int INVALID_SESSION_TIMEOUT = 374;
  static final int QUERY_WAS_CANCELLED = 394;
  static final int ACCESS_DENIED = 497;
  static final int AUTHENTICATION_FAILED = 516;
  static final int UNKNOWN_EXCEPTION = 1002;

  private static final Map<Integer, String> NAMES =
      Map.ofEntries(
          Map.entry(BAD_ARGUMENTS, "BAD_ARGUMENTS"),
          Map.entry(SYNTAX_ERROR, "SYNTAX_ERROR"),
          Map.entry(UNKNOWN_DATABASE, "UNKNOWN_DATABASE"),
          Map.entry(UNKNOWN_COMPRESSION_METHOD, "UNKNOWN_COMPRESSION_METHOD"),
          Map.entry(NO_DATA_TO_INSERT, "NO_DATA_TO_INSERT"),
          Map.entry(UNKNOWN_SETTING, "UNKNOWN_SETTING"),
          Map.entry(READONLY, "READONLY"),
          Map.entry(REQUIRED_PASSWORD, "REQUIRED_PASSWORD"),
          Map.entry(TOO_MANY_SIMULTANEOUS_QUERIES, "TOO_MANY_SIMULTANEOUS_QUERIES"),
          Map.entry(QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING, "QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING"),
          Map.entry(QUERY_IS_TOO_LARGE, "QUERY_IS_TOO_LARGE"),
          Map.entry(CANNOT_DECOMPRESS, "CANNOT_DECOMPRESS"),
          Map.entry(SESSION_NOT_FOUND, "SESSION_NOT_FOUND"),
          Map.entry(SESSION_IS_LOCKED, "SESSION_IS_LOCKED"),
          Map.entry(INVALID_SESSION_TIMEOUT, "INVALID_SESSION_TIMEOUT"),
          Map.entry(QUERY_WAS_CANCELLED, "QUERY_WAS_CANCELLED"),
          Map.entry(ACCESS_DENIED, "ACCESS_DENIED"),
          Map.entry(AUTHENTICATION_FAILED, "AUTHENTICATION_FAILED"),
          Map.entry(UNKNOWN_EXCEPTION, "UNKNOWN_EXCEPTION"));

  // ClickHouse 26.x src/Server/HTTP/exceptionCodeToHTTPStatus.cpp, by code number
  private static final Set<Integer> BAD_REQUEST =
      Set.of(
          36, 427, 6, 25, 26, 38, 41, 72, 441, 675, 676, 27, 376, 15, 44, 37, 123, 8, 167, 168, 223,
          62, 117, 53, 321);
  private static final Set<Integer> NOT_FOUND =
      Set.of(60, 46, 47, 50, 56, 81, 115, 152, 63, 73, 336, 78, 511);
  private static final Set<Integer> FORBIDDEN = Set.of(192, 193, 516, 512, 497);

  /** One of our own refusals, worded as ClickHouse words them. */
  static ClickHouseError of(int code, String message) {
    String name = NAMES.getOrDefault(code, "UNKNOWN_EXCEPTION");
    String m = message.endsWith(".") ? message.substring(0, message.length() - 1) : message;
    return new ClickHouseError(
        code, "Code: " + code + ". DB::Exception: " + m + ". (" + name + ")");
  }

  /** The engine's own message (already "Code: N. DB::Exception: ... (NAME)"). */
  static ClickHouseError fromEngine(int code, String message) {
    if (message.startsWith("Code: ")) {
      return new ClickHouseError(code, message);
    }
    return of(UNKNOWN_EXCEPTION, message);
  }

  int httpStatus() {
    if (code == REQUIRED_PASSWORD) {
      return 401;
    }
    if (FORBIDDEN.contains(code)) {
      return 403;
    }
    if (BAD_REQUEST.contains(code)) {
      return 400;
    }
    if (NOT_FOUND.contains(code)) {
      return 404;
    }
    return switch (code) {
      case QUERY_IS_TOO_LARGE -> 413;
      case 48 -> 501; // NOT_IMPLEMENTED
      case 209, 76, 439 -> 503; // SOCKET_TIMEOUT, CANNOT_OPEN_FILE, CANNOT_SCHEDULE_TASK
      case 381 -> 411; // HTTP_LENGTH_REQUIRED
      case 159 -> 408; // TIMEOUT_EXCEEDED
      // ClickHouse answers a full server 500; a clear 503 tells clients and proxies to retry later
      case TOO_MANY_SIMULTANEOUS_QUERIES -> 503;
      default -> 500;
    };
  }

  /** The error text plus a hint, keeping the "(NAME)" suffix last where clients look for it. */
  ClickHouseError withHint(String hint) {
    int suffix = text.lastIndexOf(". (");
    if (suffix < 0) {
      return new ClickHouseError(code, text + " " + hint);
    }
    return new ClickHouseError(
        code, text.substring(0, suffix) + ". " + hint + text.substring(suffix));
  }
}
