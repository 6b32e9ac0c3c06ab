package dev.llmlat.store.http.wire;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP request as read off the connection: its body is a stream that ends where the request
 * does (Content-Length or chunked), so the next request on a kept-alive connection stays intact.
 */
public record HttpRequest(String method, String path, String rawQuery, Map<String, List<String>> headers, InputStream body,
    InetAddress client) {

  /** The first value of a header (names compare case-insensitively), or null. */
  public String header(String name) {
    List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
    return values == null || values.isEmpty() ? null : values.get(0);
  }

  /** The URL's parameters, decoded; a repeated name keeps its last value, as ClickHouse does. */
  public Map<String, String> parameters() {
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
      String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
      params.put(key, value);
    }
    return params;
  }
}
