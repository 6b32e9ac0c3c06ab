package dev.llmlat.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * The model a server serves when none is named: the first of {@code GET /v1/models}, as vLLM's
 * benchmark takes it.
 */
public final class ServedModels {
  private ServedModels() {}

  /**
   * The first model id the server lists.
   *
   * @throws IllegalStateException naming the URL and what went wrong (pass the model instead)
   */
  public static String first(Target target, String apiKey, Duration timeout) {
    HttpRequest.Builder request = HttpRequest.newBuilder(target.modelsUrl()).timeout(timeout).GET();
    if (apiKey != null) {
      request.header("Authorization", "Bearer " + apiKey);
    }
    String where = "no --model given, and the server's model list " + target.modelsUrl();
    try (HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(timeout)
            .build()) {
      HttpResponse<String> response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            where + " answered HTTP " + response.statusCode() + "; pass --model");
      }
      JsonNode id = new ObjectMapper().readTree(response.body()).path("data").path(0).path("id");
      if (!id.isTextual() || id.asText().isBlank()) {
        throw new IllegalStateException(where + " names no model; pass --model");
      }
      return id.asText();
    } catch (IOException e) {
      throw new IllegalStateException(
          where
              + " cannot be read ("
              + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage())
              + "); pass --model",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(where + ": interrupted", e);
    }
  }
}
