package dev.llmlat.engine;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/** Sends chat completions to the engine with the JDK HttpClient, as a gateway would. */
final class ChatClient {
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final URI endpoint;

  ChatClient(URI base) {
    this.endpoint = base.resolve("/v1/chat/completions");
  }

  static String body(int promptWords, int maxTokens, boolean stream) {
    String prompt = "word ".repeat(promptWords).trim();
    return "{\"model\":\"tinylm\",\"stream\":"
        + stream
        + ",\"max_tokens\":"
        + maxTokens
        + ",\"messages\":[{\"role\":\"user\",\"content\":\""
        + prompt
        + "\"}]}";
  }

  /** A streamed request; completes with the SSE {@code data:} payloads, in order. */
  CompletableFuture<List<String>> stream(String traceparent, String body) {
    return http.sendAsync(request(traceparent, body), HttpResponse.BodyHandlers.ofLines())
        .thenApply(
            r -> {
              if (r.statusCode() != 200) {
                throw new IllegalStateException("HTTP " + r.statusCode());
              }
              return r.body()
                  .filter(l -> l.startsWith("data: "))
                  .map(l -> l.substring(6))
                  .collect(Collectors.toList());
            });
  }

  HttpResponse<String> send(String traceparent, String body) throws Exception {
    return http.send(request(traceparent, body), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String traceparent, String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(endpoint)
            .timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (traceparent != null) {
      b.header("traceparent", traceparent);
    }
    return b.build();
  }
}
