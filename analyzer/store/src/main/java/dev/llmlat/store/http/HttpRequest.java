package dev.llmlat.store.http;

import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.http.HttpFields;

/**
 * What the ClickHouse layer reads of one request: method, path, headers, URL parameters and a body
 * that ends where the request does (Jetty frames it).
 */
record HttpRequest(
    String method, String path, String rawQuery, HttpFields headers, InputStream body) {

  /**
   * The first value of a header (names compare case-insensitively), or null; clients send UTF-8 in
   * X-ClickHouse-* values.
   */
  String header(String name) {
    String value = headers.get(name);
    return value == null ? null : utf8(value);
  }

  /** The URL's parameters, decoded; a repeated name keeps its last value, as ClickHouse does. */
  Map<String, String> parameters() {
    Map<String, String> params = new LinkedHashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return params;
    }
    for (String pair : rawQuery.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      String value =
          eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      params.put(key, value);
    }
    return params;
  }

  /** Header bytes as Jetty hands them (one char per byte when they are not ASCII) read as UTF-8. */
  private static String utf8(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c > 0xff) {
        return value; // decoded already
      }
      if (c > 0x7f) {
        return new String(value.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
      }
    }
    return value;
  }
}
