package dev.llmlat.agent.gatewayapp;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The gateway's upstream call: the JDK HttpClient, as a plain gateway would use it. */
final class Upstream {
  private final URI base;
  private final HttpClient client =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  Upstream(String base) {
    this.base = URI.create(base);
  }

  HttpResponse<InputStream> forward(String path, byte[] body)
      throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(base.resolve(path))
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    return client.send(request, HttpResponse.BodyHandlers.ofInputStream());
  }

  static String contentType(HttpResponse<?> response) {
    return response.headers().firstValue("content-type").orElse("application/json");
  }

  static boolean isEventStream(String contentType) {
    return contentType.startsWith("text/event-stream");
  }
}
