package dev.llmlat.load;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sends one streamed completion and measures it, on the calling thread: the JDK HttpClient over
 * HTTP/1.1 (what most benchmark clients and gateways speak to engines), {@code "stream": true} with
 * {@code stream_options.include_usage}, the server-sent events read line by line as they arrive,
 * each line and event bounded by {@link LoadConfig#maxLineBytes}. Every failure becomes a {@link
 * Failure}, never an exception: what nobody foresaw is {@link Failure.Kind#INTERNAL}.
 */
final class StreamingClient implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int ERROR_BODY_BYTES = 4096;

  private final LoadConfig config;
  private final HttpClient http;
  private final ScheduledExecutorService deadlines;

  StreamingClient(LoadConfig config) {
    this.config = config;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(
                config.timeout().compareTo(Duration.ofSeconds(10)) < 0
                    ? config.timeout()
                    : Duration.ofSeconds(10))
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
    this.deadlines =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "llmlat-load-deadlines");
              t.setDaemon(true);
              return t;
            });
  }

  /** A request under way: {@link #cancel()} ends it from another thread (Ctrl-C, its deadline). */
  static final class InFlight {
    private final Thread thread;
    private InputStream body;
    private Failure.Kind stoppedAs;

    InFlight(Thread thread) {
      this.thread = thread;
    }

    /** Stops the request: it ends as {@code kind}. */
    void stop(Failure.Kind kind) {
      InputStream open;
      synchronized (this) {
        if (stoppedAs != null) {
          return;
        }
        stoppedAs = kind;
        open = body;
      }
      closeQuietly(open);
      thread.interrupt();
    }

    void cancel() {
      stop(Failure.Kind.CANCELLED);
    }

    private synchronized Failure.Kind stoppedAs() {
      return stoppedAs;
    }

    /**
     * Keeps the response body to close on stop; false (and closed) when the request was stopped
     * already.
     */
    private boolean attach(InputStream in) {
      synchronized (this) {
        if (stoppedAs == null) {
          body = in;
          return true;
        }
      }
      closeQuietly(in);
      return false;
    }
  }

  /** What to send. */
  record Call(
      int index, Prompt prompt, String traceId, String spanId, boolean sampled, long dueNanos) {}

  /** Sends {@code call} and reads the whole response; returns what it measured. Never throws. */
  RequestOutcome execute(Call call, InFlight handle) {
    Measurement m = new Measurement(call);
    m.start = System.nanoTime(); // sending sets it again; this is for a failure before that
    try {
      return send(call, handle, m);
    } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
      // what nobody foresaw (the JDK client throws IllegalArgumentException on a bad
      // Content-Length): this
      // request fails, named, and the run goes on; a request's memory goes with it, so OOM counts
      // here too
      return m.failed(Failure.internal(e));
    } finally {
      Thread.interrupted(); // a stop that raced the end leaves no interrupt behind
    }
  }

  private RequestOutcome send(Call call, InFlight handle, Measurement m) {
    HttpRequest request = request(call);
    ScheduledFuture<?> deadline =
        deadlines.schedule(
            () -> handle.stop(Failure.Kind.TIMEOUT),
            config.timeout().toNanos(),
            TimeUnit.NANOSECONDS);
    m.start = System.nanoTime();
    try {
      HttpResponse<InputStream> response =
          http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      m.headers = System.nanoTime();
      m.status = response.statusCode();
      if (!handle.attach(response.body())) {
        return m.failed(Failure.of(handle.stoppedAs(), stoppedWhy(handle.stoppedAs())));
      }
      try (InputStream body = response.body()) {
        if (m.status != 200) {
          return m.failed(
              new Failure(
                  Failure.Kind.HTTP, m.status, errorMessage(body.readNBytes(ERROR_BODY_BYTES))));
        }
        readEvents(body, m);
      }
      Failure.Kind stopped = handle.stoppedAs();
      if (stopped != null) { // a closed stream may read as its end: the stop is what happened
        return m.failed(Failure.of(stopped, stoppedWhy(stopped)));
      }
      if (m.failure == null && m.chunks == 0) {
        m.failure = Failure.of(Failure.Kind.NO_CONTENT, "the stream ended without a content chunk");
      }
      return m.done();
    } catch (HttpConnectTimeoutException e) {
      return m.failed(
          Failure.of(
              Failure.Kind.CONNECT_TIMEOUT,
              "no connection to "
                  + config.target().url().getHost()
                  + " within "
                  + config.timeout().toMillis()
                  + " ms"));
    } catch (HttpTimeoutException e) {
      return m.failed(
          Failure.of(
              Failure.Kind.TIMEOUT,
              "no response headers within " + config.timeout().toMillis() + " ms"));
    } catch (ConnectException e) {
      return m.failed(
          handle.stoppedAs() != null
              ? Failure.of(handle.stoppedAs(), stoppedWhy(handle.stoppedAs()))
              : Failure.of(
                  Failure.Kind.CONNECTION_REFUSED,
                  "cannot connect to "
                      + config.target().url().getHost()
                      + ":"
                      + config.target().port()
                      + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")")));
    } catch (IOException | InterruptedException e) {
      Failure.Kind stopped = handle.stoppedAs();
      return m.failed(
          stopped != null
              ? Failure.of(stopped, stoppedWhy(stopped))
              : Failure.of(
                  Failure.Kind.CONNECTION,
                  e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
    } finally {
      deadline.cancel(false);
    }
  }

  private String stoppedWhy(Failure.Kind kind) {
    return kind == Failure.Kind.TIMEOUT
        ? "the response did not end within " + config.timeout().toMillis() + " ms"
        : "stopped in flight";
  }

  private HttpRequest request(Call call) {
    ObjectNode body = JSON.createObjectNode().put("model", config.model());
    if (config.target().endpoint() == Endpoint.CHAT) {
      body.putArray("messages")
          .addObject()
          .put("role", "user")
          .put("content", call.prompt().text());
      body.put(
          "max_completion_tokens", call.prompt().outputTokens()); // as vLLM's benchmark sends it
    } else {
      body.put("prompt", call.prompt().text());
      body.put("max_tokens", call.prompt().outputTokens());
    }
    if (config.ignoreEos()) {
      body.put("ignore_eos", true);
    }
    body.put("stream", true);
    body.putObject("stream_options").put("include_usage", true);
    HttpRequest.Builder b =
        HttpRequest.newBuilder(config.target().url())
            .timeout(config.timeout())
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream")
            .header(
                "traceparent",
                "00-" + call.traceId() + "-" + call.spanId() + (call.sampled() ? "-01" : "-00"));
    if (config.apiKey() != null) {
      b.header("Authorization", "Bearer " + config.apiKey());
    }
    if (config.tenant() != null) {
      b.header(LoadConfig.TENANT_HEADER, config.tenant());
    }
    try {
      return b.POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode a request body: " + e.getMessage(), e);
    }
  }

  /**
   * Reads server-sent events to the end of the stream, timing each event as it completes. A line or
   * an event over {@link LoadConfig#maxLineBytes} fails the request at once (the rest is not read).
   */
  private void readEvents(InputStream body, Measurement m) throws IOException {
    EventLines in =
        new EventLines(body, (int) config.maxLineBytes()); // at most 1 GiB: LoadConfig says so
    StringBuilder data = null;
    String line;
    try {
      while ((line = in.next()) != null) {
        if (line.isEmpty()) {
          if (data != null) {
            event(data.toString(), System.nanoTime(), m);
            data = null;
          }
        } else if (line.startsWith("data:")) {
          String value = line.startsWith("data: ") ? line.substring(6) : line.substring(5);
          if (data != null && data.length() + 1L + value.length() > config.maxLineBytes()) {
            m.failOnce(
                Failure.of(
                    Failure.Kind.BAD_STREAM,
                    "event too long (its data lines add up to over "
                        + ByteSize.describe(config.maxLineBytes())
                        + ")"));
            return;
          }
          data = data == null ? new StringBuilder(value) : data.append('\n').append(value);
        }
        // comments (":") and other fields (event, id, retry) carry no tokens
      }
    } catch (EventLines.TooLong e) {
      m.failOnce(Failure.of(Failure.Kind.BAD_STREAM, e.getMessage()));
      return;
    }
    if (data != null) {
      event(data.toString(), System.nanoTime(), m); // the last event, its blank line cut off
    }
  }

  private void event(String data, long now, Measurement m) {
    if (data.equals("[DONE]") || m.failure != null) {
      return;
    }
    JsonNode chunk;
    try {
      chunk = JSON.readTree(data);
    } catch (JsonProcessingException e) {
      m.failure =
          Failure.of(Failure.Kind.BAD_STREAM, "an event is not JSON: " + e.getOriginalMessage());
      return;
    }
    if (chunk == null || !chunk.isObject()) {
      m.failure = Failure.of(Failure.Kind.BAD_STREAM, "an event is not a JSON object");
      return;
    }
    JsonNode error = chunk.get("error");
    if (error != null && !error.isNull()) {
      m.failure =
          Failure.of(
              Failure.Kind.STREAM_ERROR,
              error.isObject() ? error.path("message").asText(error.toString()) : error.asText());
      return;
    }
    JsonNode choice = chunk.path("choices").path(0);
    JsonNode text =
        config.target().endpoint() == Endpoint.CHAT
            ? choice.path("delta").path("content")
            : choice.path("text");
    if (text.isTextual() && !text.asText().isEmpty()) {
      m.chunk(now);
    }
    JsonNode usage = chunk.get("usage");
    if (usage != null && usage.isObject()) {
      m.usagePrompt =
          usage.path("prompt_tokens").canConvertToInt()
              ? usage.path("prompt_tokens").asInt(-1)
              : -1;
      m.usageCompletion =
          usage.path("completion_tokens").canConvertToInt()
              ? usage.path("completion_tokens").asInt(-1)
              : -1;
    }
  }

  /** The server's error text: OpenAI's {@code error.message}, else the body's first line. */
  private static String errorMessage(byte[] body) {
    String text = new String(body, StandardCharsets.UTF_8).strip();
    try {
      JsonNode error = JSON.readTree(text).path("error");
      if (error.isObject() && error.path("message").isTextual()) {
        return error.path("message").asText();
      }
      if (error.isTextual()) {
        return error.asText();
      }
    } catch (JsonProcessingException | RuntimeException e) {
      // not JSON: the text itself
    }
    int eol = text.indexOf('\n');
    return eol < 0 ? text : text.substring(0, eol);
  }

  private static void closeQuietly(InputStream in) {
    if (in != null) {
      try {
        in.close();
      } catch (IOException ignored) {
        // stopping it is all that was wanted
      }
    }
  }

  @Override
  public void close() {
    deadlines.shutdownNow();
    http.shutdownNow();
  }

  /** The readings of one request while it runs. */
  private static final class Measurement {
    final Call call;
    long start;
    long headers = -1;
    long[] chunkTimes = new long[16];
    int chunks;
    int status;
    int usagePrompt = -1;
    int usageCompletion = -1;
    Failure failure;

    Measurement(Call call) {
      this.call = call;
    }

    void chunk(long now) {
      if (chunks == chunkTimes.length) {
        chunkTimes = Arrays.copyOf(chunkTimes, chunks * 2);
      }
      chunkTimes[chunks++] = now;
    }

    /** The first failure is the one that counts. */
    void failOnce(Failure why) {
      failure = failure == null ? why : failure;
    }

    RequestOutcome failed(Failure why) {
      failOnce(why);
      return done();
    }

    RequestOutcome done() {
      return new RequestOutcome(
          call.index(),
          call.traceId(),
          call.spanId(),
          call.prompt().inputTokens(),
          call.prompt().outputTokens(),
          call.dueNanos(),
          start,
          headers,
          Arrays.copyOf(chunkTimes, chunks),
          System.nanoTime(),
          status,
          usagePrompt,
          usageCompletion,
          failure);
    }
  }
}
