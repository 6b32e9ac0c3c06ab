package dev.llmlat.store.http.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Where a request's body ends, from its Content-Length and Transfer-Encoding, refusing every
 * framing that two parsers could read differently (RFC 9112 §6.3): a proxy in front that
 * frames the body otherwise would let a client smuggle a second request inside the first.
 *
 * @param chunked the body is chunked
 * @param length the body's length when not chunked
 */
record RequestFraming(boolean chunked, long length) {
  private static final Pattern DIGITS = Pattern.compile("[0-9]{1,18}"); // 18 digits cannot overflow a long

  static RequestFraming of(Map<String, List<String>> headers, boolean http10) throws HttpProtocolException {
    List<String> codings = elements(headers.get("transfer-encoding"));
    List<String> lengths = elements(headers.get("content-length"));
    if (codings != null) {
      if (lengths != null) {
        throw new HttpProtocolException("a request must not have both Content-Length and Transfer-Encoding");
      }
      if (http10) {
        throw new HttpProtocolException("HTTP/1.0 has no Transfer-Encoding");
      }
      // chunked must be the last coding, and this server decodes no other (gzip goes in Content-Encoding)
      if (codings.size() != 1 || !codings.get(0).toLowerCase(Locale.ROOT).equals("chunked")) {
        throw new HttpProtocolException("Transfer-Encoding '" + String.join(", ", codings) + "' is not supported: only chunked");
      }
      return new RequestFraming(true, 0);
    }
    if (lengths == null) {
      return new RequestFraming(false, 0);
    }
    // RFC 9110 §8.6 lets a recipient fold identical values ("42, 42" or the header twice): the
    // framing is the same whichever one a proxy picks; different values have no safe reading
    String length = lengths.get(0);
    for (String other : lengths) {
      if (!DIGITS.matcher(other).matches()) {
        throw new HttpProtocolException("bad Content-Length '" + other + "'");
      }
      if (!other.equals(length)) {
        throw new HttpProtocolException("conflicting Content-Length values " + length + " and " + other);
      }
    }
    return new RequestFraming(false, Long.parseLong(length));
  }

  /** The comma-separated elements of all of a header's lines; null when the header is absent. */
  private static List<String> elements(List<String> values) {
    if (values == null) {
      return null;
    }
    List<String> all = new ArrayList<>();
    for (String value : values) {
      for (String element : value.split(",", -1)) {
        all.add(element.strip());
      }
    }
    return all;
  }
}
