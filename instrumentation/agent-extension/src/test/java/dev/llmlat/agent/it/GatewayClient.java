package dev.llmlat.agent.it;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The user's side: sends OpenAI-style requests to a gateway and times them. */
public final class GatewayClient {
  /** One response as the client saw it, with client-side epoch nanos. */
  public record Result(
      int status, String body, long startEpochNanos, long firstByteEpochNanos, long endEpochNanos) {
    public long latencyNanos() {
      return endEpochNanos - startEpochNanos;
    }
  }

  public static final String SECRET_PROMPT = "SECRET-PROMPT-must-never-be-exported";

  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  public static String chatBody(boolean stream, int maxTokens) {
    return "{\"model\":\"tinylm-1b\",\"messages\":[{\"role\":\"user\",\"content\":\""
        + SECRET_PROMPT
        + "\"}],\"stream\":"
        + stream
        + ",\"max_tokens\":"
        + maxTokens
        + "}";
  }

  public static String completionBody() {
    return "{\"model\":\"tinylm-1b\",\"prompt\":\"" + SECRET_PROMPT + "\",\"max_tokens\":16}";
  }

  public Result post(String baseUrl, String path, String json)
      throws IOException, InterruptedException {
    return post(baseUrl, path, json, null);
  }

  /** With a {@code traceparent} (when not null): the gateway's SERVER span joins that trace. */
  public Result post(String baseUrl, String path, String json, String traceparent)
      throws IOException, InterruptedException {
    HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(baseUrl + path));
    if (traceparent != null) {
      builder.header("traceparent", traceparent);
    }
    HttpRequest request =
        builder
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build();
    long start = FakeEngine.epochNanos();
    HttpResponse<InputStream> response =
        client.send(request, HttpResponse.BodyHandlers.ofInputStream());
    try (InputStream in = response.body()) {
      byte[] first = in.readNBytes(1);
      long firstByte = FakeEngine.epochNanos();
      byte[] rest = in.readAllBytes();
      long end = FakeEngine.epochNanos();
      String body =
          new String(first, StandardCharsets.UTF_8) + new String(rest, StandardCharsets.UTF_8);
      return new Result(response.statusCode(), body, start, firstByte, end);
    }
  }
}
