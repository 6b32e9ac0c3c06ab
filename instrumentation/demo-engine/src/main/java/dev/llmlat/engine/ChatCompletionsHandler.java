package dev.llmlat.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.llmlat.scheduler.RequestInfo;
import dev.llmlat.scheduler.SchedulerClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code POST /v1/chat/completions}, OpenAI-compatible: {@code "stream": true} answers with
 * server-sent events, one {@code chat.completion.chunk} per generated token (the first carries the
 * assistant role, the last the finish reason), a last chunk with usage and no choices when {@code
 * stream_options.include_usage} asks for it, then {@code data: [DONE]}; otherwise one {@code
 * chat.completion} with usage. The legacy {@code POST /v1/completions} ({@link #completions}) is
 * the same with a {@code prompt} and {@code text_completion} objects whose choices carry {@code
 * text}.
 */
final class ChatCompletionsHandler implements HttpHandler {
  private static final long TOKEN_TIMEOUT_S = 120;
  private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.US_ASCII);

  private final EngineConfig config;
  private final ContinuousBatchingScheduler scheduler;
  private final SchedulerClock clock;
  private final ObjectMapper json = new ObjectMapper();
  private final AtomicLong ids = new AtomicLong();
  private final boolean legacy; // /v1/completions

  ChatCompletionsHandler(
      EngineConfig config, ContinuousBatchingScheduler scheduler, SchedulerClock clock) {
    this(config, scheduler, clock, false);
  }

  private ChatCompletionsHandler(
      EngineConfig config,
      ContinuousBatchingScheduler scheduler,
      SchedulerClock clock,
      boolean legacy) {
    this.config = config;
    this.scheduler = scheduler;
    this.clock = clock;
    this.legacy = legacy;
  }

  /**
   * {@code POST /v1/completions}: a prompt instead of messages, the same scheduling and streaming.
   */
  static ChatCompletionsHandler completions(
      EngineConfig config, ContinuousBatchingScheduler scheduler, SchedulerClock clock) {
    return new ChatCompletionsHandler(config, scheduler, clock, true);
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    long arrival = clock.now();
    try (exchange) {
      if (!"POST".equals(exchange.getRequestMethod())) {
        error(exchange, 405, "use POST");
        return;
      }
      JsonNode body;
      try (InputStream in = exchange.getRequestBody()) {
        body = json.readTree(in);
      } catch (IOException e) {
        error(exchange, 400, "request body is not JSON: " + e.getMessage());
        return;
      }
      int promptTokens =
          body == null
              ? -1
              : legacy ? promptTokens(body.get("prompt")) : chatPromptTokens(body.get("messages"));
      if (promptTokens < 0) {
        error(
            exchange,
            400,
            legacy
                ? "'prompt' must be a string or an array of strings"
                : "'messages' must be a non-empty array");
        return;
      }
      int maxTokens =
          body.path("max_completion_tokens")
              .asInt(body.path("max_tokens").asInt(config.defaultMaxTokens()));
      if (maxTokens < 1) {
        error(exchange, 400, "max_tokens must be at least 1");
        return;
      }
      boolean stream = body.path("stream").asBoolean(false);
      boolean usage = body.path("stream_options").path("include_usage").asBoolean(false);
      String id =
          (legacy ? "cmpl-" : "chatcmpl-")
              + Long.toHexString(System.identityHashCode(this))
              + "-"
              + ids.incrementAndGet();
      RequestInfo info =
          legacy
              ? new RequestInfo(id, config.model(), "text_completion", promptTokens, maxTokens)
              : RequestInfo.chat(id, config.model(), promptTokens, maxTokens);
      EngineRequest request;
      try {
        request = scheduler.submit(info, headers(exchange), arrival);
      } catch (IllegalArgumentException e) {
        error(exchange, 400, e.getMessage());
        return;
      } catch (IllegalStateException e) {
        error(exchange, 503, e.getMessage());
        return;
      }
      if (stream) {
        stream(exchange, request, id, usage ? promptTokens : -1);
      } else {
        complete(exchange, request, id, promptTokens);
      }
    }
  }

  /**
   * Chat prompt tokens: each message's content plus its template tokens; -1 when not a non-empty
   * array.
   */
  private static int chatPromptTokens(JsonNode messages) {
    if (messages == null || !messages.isArray() || messages.isEmpty()) {
      return -1;
    }
    int tokens = 0;
    for (JsonNode m : messages) {
      tokens +=
          PromptTokenizer.TEMPLATE_TOKENS_PER_MESSAGE
              + PromptTokenizer.count(m.path("content").asText(""));
    }
    return tokens;
  }

  /** A legacy prompt's tokens (a string, or strings taken together); -1 when neither. */
  private static int promptTokens(JsonNode prompt) {
    if (prompt != null && prompt.isTextual()) {
      return PromptTokenizer.count(prompt.asText());
    }
    if (prompt == null || !prompt.isArray() || prompt.isEmpty()) {
      return -1;
    }
    int tokens = 0;
    for (JsonNode p : prompt) {
      if (!p.isTextual()) {
        return -1;
      }
      tokens += PromptTokenizer.count(p.asText());
    }
    return tokens;
  }

  /**
   * Streams the tokens; with {@code usagePromptTokens} >= 0 a usage chunk ends the stream
   * (stream_options.include_usage).
   */
  private void stream(
      HttpExchange exchange, EngineRequest request, String id, int usagePromptTokens)
      throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
    exchange.getResponseHeaders().set("Cache-Control", "no-cache");
    exchange.sendResponseHeaders(200, 0);
    long created = System.currentTimeMillis() / 1000;
    OutputStream out = exchange.getResponseBody();
    String object = legacy ? "text_completion" : "chat.completion.chunk";
    int tokens = 0;
    try {
      while (true) {
        TokenStream.Event event = next(request);
        if (event.error() != null) {
          ObjectNode err = json.createObjectNode();
          err.putObject("error").put("message", event.error()).put("type", "server_error");
          write(out, err);
          break;
        }
        ObjectNode chunk = envelope(id, object, created);
        ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
        if (legacy) {
          choice.put("text", event.text());
        } else {
          ObjectNode delta = choice.putObject("delta");
          if (event.index() == 0) {
            delta.put("role", "assistant");
          }
          delta.put("content", event.text());
        }
        tokens++;
        if (event.finishReason() != null) {
          choice.put("finish_reason", event.finishReason());
        } else {
          choice.putNull("finish_reason");
        }
        write(out, chunk);
        if (event.last()) {
          if (usagePromptTokens >= 0) {
            ObjectNode usage = envelope(id, object, created);
            usage.putArray("choices");
            usage.set("usage", usage(usagePromptTokens, tokens));
            write(out, usage);
          }
          break;
        }
      }
      out.write(DONE);
      out.flush();
    } catch (IOException e) {
      scheduler.cancel(request); // the client went away: stop spending steps on it
      throw e;
    }
  }

  private void complete(HttpExchange exchange, EngineRequest request, String id, int promptTokens)
      throws IOException {
    StringBuilder text = new StringBuilder();
    int tokens = 0;
    String finish;
    while (true) {
      TokenStream.Event event = next(request);
      if (event.error() != null) {
        error(exchange, 500, event.error());
        return;
      }
      text.append(event.text());
      tokens++;
      if (event.last()) {
        finish = event.finishReason();
        break;
      }
    }
    ObjectNode response =
        envelope(
            id, legacy ? "text_completion" : "chat.completion", System.currentTimeMillis() / 1000);
    ArrayNode choices = response.putArray("choices");
    ObjectNode choice = choices.addObject().put("index", 0).put("finish_reason", finish);
    if (legacy) {
      choice.put("text", text.toString());
    } else {
      choice.putObject("message").put("role", "assistant").put("content", text.toString());
    }
    response.set("usage", usage(promptTokens, tokens));
    send(exchange, 200, json.writeValueAsBytes(response));
  }

  private ObjectNode usage(int promptTokens, int completionTokens) {
    return json.createObjectNode()
        .put("prompt_tokens", promptTokens)
        .put("completion_tokens", completionTokens)
        .put("total_tokens", promptTokens + completionTokens);
  }

  private TokenStream.Event next(EngineRequest request) throws IOException {
    try {
      TokenStream.Event event = request.stream.next(TOKEN_TIMEOUT_S, TimeUnit.SECONDS);
      if (event == null) {
        scheduler.cancel(request);
        throw new IOException("no token within " + TOKEN_TIMEOUT_S + " s");
      }
      return event;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      scheduler.cancel(request);
      throw new IOException("interrupted", e);
    }
  }

  private ObjectNode envelope(String id, String object, long created) {
    return json.createObjectNode()
        .put("id", id)
        .put("object", object)
        .put("created", created)
        .put("model", config.model());
  }

  private void write(OutputStream out, ObjectNode event) throws IOException {
    out.write(
        ("data: " + json.writeValueAsString(event) + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush(); // each token leaves now: TTFT at the client is the engine's first token
  }

  private void error(HttpExchange exchange, int status, String message) throws IOException {
    ObjectNode err = json.createObjectNode();
    err.putObject("error")
        .put("message", message)
        .put("type", status >= 500 ? "server_error" : "invalid_request_error");
    send(exchange, status, json.writeValueAsBytes(err));
  }

  private static void send(HttpExchange exchange, int status, byte[] body) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, body.length);
    exchange.getResponseBody().write(body);
  }

  // First value of each header, names lowercased: traceparent/tracestate for the SDK.
  private static Map<String, String> headers(HttpExchange exchange) {
    Map<String, String> headers = new HashMap<>();
    for (Map.Entry<String, List<String>> e : exchange.getRequestHeaders().entrySet()) {
      if (e.getKey() != null && !e.getValue().isEmpty()) {
        headers.put(e.getKey().toLowerCase(java.util.Locale.ROOT), e.getValue().get(0));
      }
    }
    return headers;
  }
}
