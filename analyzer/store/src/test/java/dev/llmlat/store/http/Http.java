package dev.llmlat.store.http;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** A plain HTTP client for the tests: what curl would send, nothing the server could lean on. */
final class Http {
  final String base;
  final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Map<String, String> defaultHeaders = new LinkedHashMap<>();

  Http(String base) {
    this.base = base;
  }

  Http withBasicAuth(String user, String password) {
    defaultHeaders.put(
        "Authorization",
        "Basic "
            + Base64.getEncoder()
                .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    return this;
  }

  record Reply(int status, Map<String, java.util.List<String>> headers, byte[] bytes) {
    String body() {
      return new String(bytes, StandardCharsets.UTF_8);
    }

    String header(String name) {
      return headers.entrySet().stream()
          .filter(e -> e.getKey().equalsIgnoreCase(name))
          .map(e -> e.getValue().get(0))
          .findFirst()
          .orElse(null);
    }
  }

  static String query(Map<String, String> params) {
    StringBuilder q = new StringBuilder();
    params.forEach(
        (k, v) ->
            q.append(q.isEmpty() ? "?" : "&")
                .append(URLEncoder.encode(k, StandardCharsets.UTF_8))
                .append('=')
                .append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
    return q.toString();
  }

  Reply post(String sql) throws IOException, InterruptedException {
    return post(Map.of(), sql);
  }

  Reply post(Map<String, String> params, String sql) throws IOException, InterruptedException {
    return send("POST", params, Map.of(), sql.getBytes(StandardCharsets.UTF_8));
  }

  Reply get(Map<String, String> params) throws IOException, InterruptedException {
    return send("GET", params, Map.of(), null);
  }

  Reply send(String method, Map<String, String> params, Map<String, String> headers, byte[] body)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + "/" + query(params)))
            .timeout(Duration.ofSeconds(60));
    defaultHeaders.forEach(b::header);
    headers.forEach(b::header);
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body));
    HttpResponse<byte[]> r = client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    return new Reply(r.statusCode(), r.headers().map(), r.body());
  }
}
