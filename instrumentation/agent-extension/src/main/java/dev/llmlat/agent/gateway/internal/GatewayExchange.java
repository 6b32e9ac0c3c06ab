package dev.llmlat.agent.gateway.internal;

import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.instrumentation.api.instrumenter.LocalRootSpan;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One OpenAI-style request through the gateway, as the server stack's hooks see it: request body
 * bytes as the application reads them, response bytes as it writes them, and the moments they are
 * handed to the network. Writes {@code gen_ai.*} attributes, the first-chunk event and the chunk
 * count on the gateway's SERVER span (the local root span), and the tenant when the user opted in
 * ({@link TenantConfig}). Server-stack neutral; synchronized because some stacks read and write on
 * different threads (never concurrently for one request).
 */
public final class GatewayExchange implements OpenAiRequestScanner.Listener {
  static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");
  static final AttributeKey<String> MODEL = AttributeKey.stringKey("gen_ai.request.model");
  static final AttributeKey<Boolean> STREAM = AttributeKey.booleanKey("gen_ai.request.stream");
  static final AttributeKey<Long> MAX_TOKENS = AttributeKey.longKey("gen_ai.request.max_tokens");
  static final AttributeKey<Long> FIRST_CHUNK_NS =
      AttributeKey.longKey(LlmlatAttributes.GATEWAY_FIRST_CHUNK_NS);
  static final AttributeKey<Long> CHUNKS = AttributeKey.longKey(LlmlatAttributes.GATEWAY_CHUNKS);
  // GenAI semantic conventions; written only when the user opted in (ContentCapture)
  static final AttributeKey<String> INPUT_MESSAGES =
      AttributeKey.stringKey("gen_ai.input.messages");
  static final AttributeKey<String> OUTPUT_MESSAGES =
      AttributeKey.stringKey("gen_ai.output.messages");
  static final AttributeKey<String> TENANT = AttributeKey.stringKey(LlmlatAttributes.TENANT);
  static final AttributeKey<Long> BACKPRESSURE_COUNT =
      AttributeKey.longKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_COUNT);
  static final AttributeKey<Long> BACKPRESSURE_TOTAL_NS =
      AttributeKey.longKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_TOTAL_NS);
  static final AttributeKey<Long> BACKPRESSURE_DURATION_NS =
      AttributeKey.longKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_DURATION_NS);
  static final AttributeKey<String> BACKPRESSURE_CAUSE =
      AttributeKey.stringKey(LlmlatAttributes.GATEWAY_BACKPRESSURE_CAUSE);

  /**
   * Backpressure events per request: the span's event limit (128 by default) is shared with the
   * others.
   */
  static final int MAX_BACKPRESSURE_EVENTS = 32;

  /**
   * How long a blocking write to the client (a servlet container's stream) must take to count as
   * blocked on it: a write that returns at once copied into the socket's buffer; one that takes
   * this long waited for the client to drain it (well above a busy machine's scheduling delays).
   */
  static final long BLOCKED_WRITE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private enum ResponseMode {
    UNKNOWN,
    NOT_STREAMED,
    EVENT_STREAM,
    CHUNKED
  }

  /** Null for an RPC stack's exchange ({@link #forMessages}). */
  private final OpenAiEndpoint endpoint;

  private final OpenAiRequestScanner scanner;
  private final SseEventCounter events = new SseEventCounter();

  /** Null unless content capture is on: by default no response byte is kept. */
  private final CompletionText completion =
      ContentCapture.enabled() ? new CompletionText(ContentCapture.maxLength()) : null;

  private String inputMessages;
  private Span span;

  /**
   * False once the span must no longer be looked up in the current context ({@link
   * #inCurrentSpan}).
   */
  private boolean spanLookup = true;

  private String model;
  private Boolean stream;
  private Long maxTokens;
  private String tenant;
  private ResponseMode mode = ResponseMode.UNKNOWN;
  private int pendingEvents;
  private boolean pendingBytes;
  private long chunks;
  private volatile boolean firstChunkRecorded;
  private long backpressureCount;
  private long backpressureNs;

  /**
   * {@code requestHeaders} gives a request header's first value by name (any case), or null: the
   * tenant may come from one; it is not kept.
   */
  public GatewayExchange(OpenAiEndpoint endpoint, Function<String, String> requestHeaders) {
    this(endpoint, requestHeaders, TenantConfig.current(), true);
  }

  GatewayExchange(
      OpenAiEndpoint endpoint,
      Function<String, String> requestHeaders,
      TenantConfig tenants,
      boolean spanLookup) {
    this.endpoint = endpoint;
    this.scanner =
        new OpenAiRequestScanner(
            this,
            ContentCapture.enabled() ? ContentCapture.maxLength() : 0,
            tenants.fromUserField());
    this.tenant = tenants.fromHeaders(requestHeaders);
    span();
    this.spanLookup = spanLookup;
  }

  /**
   * For RPC stacks (gRPC): no OpenAI body to scan, and each response message the gateway sends is
   * one chunk ({@link #onMessageSent}); the SERVER span is taken from the current context now or
   * never, as {@link #inCurrentSpan}.
   */
  public static GatewayExchange forMessages(Function<String, String> requestHeaders) {
    return new GatewayExchange(null, requestHeaders, TenantConfig.current(), false);
  }

  /**
   * For stacks whose later hooks run on threads shared by many requests (Netty's event loops, a
   * servlet's async writer), where the current span may be another request's: the SERVER span is
   * taken from the current context now or never ({@link #hasSpan()} tells).
   */
  public static GatewayExchange inCurrentSpan(
      OpenAiEndpoint endpoint, Function<String, String> requestHeaders) {
    return new GatewayExchange(endpoint, requestHeaders, TenantConfig.current(), false);
  }

  /** True once the SERVER span is known: only then is anything recorded. */
  public synchronized boolean hasSpan() {
    return span != null;
  }

  /**
   * The SERVER span, found in the current context the first time a hook runs inside it (a hook
   * running outside the server span's scope, e.g. on an I/O thread, simply waits for the next).
   */
  private Span span() {
    if (span == null && spanLookup) {
      Span current = LocalRootSpan.current();
      if (current.getSpanContext().isValid()) {
        span = current;
        if (endpoint != null) {
          current.setAttribute(OPERATION, endpoint.operationName());
        }
        applyRequestAttributes();
      }
    }
    return span;
  }

  /** The fields read before the span was known (each later one is set as it arrives). */
  private void applyRequestAttributes() {
    if (model != null) {
      span.setAttribute(MODEL, model);
    }
    if (stream != null) {
      span.setAttribute(STREAM, stream);
    }
    if (maxTokens != null) {
      span.setAttribute(MAX_TOKENS, maxTokens);
    }
    if (inputMessages != null) {
      span.setAttribute(INPUT_MESSAGES, inputMessages);
    }
    if (tenant != null) {
      span.setAttribute(TENANT, tenant);
    }
  }

  @Override
  public void onInputMessages(String json, long totalChars) {
    this.inputMessages = ContentCapture.bounded(json, totalChars, ContentCapture.maxLength());
    if (span != null) {
      span.setAttribute(INPUT_MESSAGES, inputMessages);
    }
  }

  public synchronized void onRequestBytes(byte[] bytes, int offset, int length) {
    if (length > 0 && !scanner.isDone()) {
      span();
      scanner.accept(bytes, offset, length);
    }
  }

  public synchronized void onRequestBytes(ByteBuffer buffer) {
    if (buffer.hasRemaining() && !scanner.isDone()) {
      span();
      scanner.accept(buffer);
    }
  }

  @Override
  public void onModel(String model) {
    this.model = model;
    if (span != null) {
      span.setAttribute(MODEL, model);
    }
  }

  @Override
  public void onStream(boolean stream) {
    this.stream = stream;
    if (span != null) {
      span.setAttribute(STREAM, stream);
    }
  }

  @Override
  public void onUser(String user) {
    String bounded = TenantConfig.bounded(user);
    if (bounded == null) {
      return;
    }
    this.tenant = bounded;
    if (span != null) {
      span.setAttribute(TENANT, bounded);
    }
  }

  @Override
  public void onMaxTokens(long maxTokens) {
    this.maxTokens = maxTokens;
    if (span != null) {
      span.setAttribute(MAX_TOKENS, maxTokens);
    }
  }

  /** True once the response was classified; the hooks skip further header look-ups. */
  public synchronized boolean responseClassified() {
    return mode != ResponseMode.UNKNOWN;
  }

  /**
   * Classifies the response when its headers are known: an event stream, a chunked body of unknown
   * length (streamed), or a plain body (no first-chunk data is recorded for it).
   */
  public synchronized void onResponseHeaders(String contentType, boolean lengthUnknown) {
    if (mode != ResponseMode.UNKNOWN) {
      return;
    }
    if (contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17)) {
      mode = ResponseMode.EVENT_STREAM;
    } else if (lengthUnknown) {
      mode = ResponseMode.CHUNKED;
    } else {
      mode = ResponseMode.NOT_STREAMED;
    }
  }

  public synchronized void onResponseBytes(byte[] bytes, int offset, int length) {
    if (length <= 0) {
      return;
    }
    if (completion != null) {
      for (int i = offset; i < offset + length; i++) {
        captureResponse(bytes[i]);
      }
    }
    if (mode == ResponseMode.EVENT_STREAM) {
      pendingEvents += events.accept(bytes, offset, length);
    } else if (mode == ResponseMode.CHUNKED) {
      pendingBytes = true;
    }
  }

  public synchronized void onResponseBytes(ByteBuffer buffer) {
    if (!buffer.hasRemaining()) {
      return;
    }
    if (completion != null) {
      for (int i = buffer.position(); i < buffer.limit(); i++) {
        captureResponse(buffer.get(i));
      }
    }
    if (mode == ResponseMode.EVENT_STREAM) {
      pendingEvents += events.accept(buffer);
    } else if (mode == ResponseMode.CHUNKED) {
      pendingBytes = true;
    }
  }

  /**
   * The time to pass to {@link #onResponseSent(long)}, read just before the bytes go to the network
   * (read after, it could trail the client's own receipt); 0 once the first chunk is recorded.
   */
  public long sendingAt() {
    return firstChunkRecorded ? 0 : epochNanos();
  }

  /**
   * The bytes written so far were handed to the network (a flush, a send, a close) at {@code
   * sendingAt} ({@link #sendingAt()}): content among them counts as chunks; the first one is the
   * first token the client saw.
   */
  public synchronized void onResponseSent(long sendingAt) {
    int sent = mode == ResponseMode.EVENT_STREAM ? pendingEvents : pendingBytes ? 1 : 0;
    pendingEvents = 0;
    pendingBytes = false;
    if (completion != null && span() != null) {
      if (mode != ResponseMode.EVENT_STREAM) {
        completion.finishBody();
      }
      if (completion.changed()) {
        span.setAttribute(OUTPUT_MESSAGES, completion.json());
      }
    }
    if (sent == 0 || span() == null) {
      chunks += sent;
      return;
    }
    if (chunks == 0) {
      long now = sendingAt != 0 ? sendingAt : epochNanos();
      firstChunkRecorded = true;
      span.addEvent(
          LlmlatAttributes.EVENT_FIRST_CHUNK, Attributes.empty(), now, TimeUnit.NANOSECONDS);
      span.setAttribute(FIRST_CHUNK_NS, now);
    }
    chunks += sent;
    // Set on every chunk (cheap): some stacks end the span before the response stream is closed.
    span.setAttribute(CHUNKS, chunks);
  }

  /**
   * One response message (an RPC stack's) was handed to the transport at {@code sendingAt} ({@link
   * #sendingAt()}): one chunk; the first is the first token the client saw.
   */
  public synchronized void onMessageSent(long sendingAt) {
    mode = ResponseMode.CHUNKED;
    pendingBytes = true;
    onResponseSent(sendingAt);
  }

  /**
   * This server stack tells when the client stops taking writes (called as the exchange starts):
   * the span says so with a count of 0, which {@link #onBackpressure} raises; without it,
   * backpressure is unknown.
   */
  public synchronized void backpressureObserved() {
    if (span() != null) {
      span.setAttribute(BACKPRESSURE_COUNT, backpressureCount);
    }
  }

  /**
   * The gateway could not write to its client from {@code startEpochNanos} for {@code durationNs}
   * (the client read slowly), on a stack that does not tell what was full (servlet containers: on
   * HTTP/2 a write may wait for flow control as well as for the socket).
   */
  public void onBackpressure(long startEpochNanos, long durationNs) {
    onBackpressure(startEpochNanos, durationNs, null);
  }

  /**
   * The gateway could not write to its client from {@code startEpochNanos} for {@code durationNs}
   * (the client read slowly), {@code cause} being full (a {@link
   * LlmlatAttributes#GATEWAY_BACKPRESSURE_CAUSE} value; null: not known): an event for each of the
   * first {@link #MAX_BACKPRESSURE_EVENTS}, the count and total for all.
   */
  public synchronized void onBackpressure(long startEpochNanos, long durationNs, String cause) {
    if (span() == null) {
      return;
    }
    backpressureCount++;
    backpressureNs += durationNs;
    if (backpressureCount <= MAX_BACKPRESSURE_EVENTS) {
      span.addEvent(
          LlmlatAttributes.EVENT_GATEWAY_BACKPRESSURE,
          cause == null
              ? Attributes.of(BACKPRESSURE_DURATION_NS, durationNs)
              : Attributes.of(BACKPRESSURE_DURATION_NS, durationNs, BACKPRESSURE_CAUSE, cause),
          startEpochNanos,
          TimeUnit.NANOSECONDS);
    }
    span.setAttribute(BACKPRESSURE_COUNT, backpressureCount);
    span.setAttribute(BACKPRESSURE_TOTAL_NS, backpressureNs);
  }

  /**
   * A write to the client that began at {@code startNanoTime} ({@link System#nanoTime}) is done: a
   * blocking write returned, a send's callback ran (Jetty), a call that turned not ready is ready
   * again (gRPC). One that took {@link #BLOCKED_WRITE_NANOS} or longer is backpressure.
   */
  void onBlockingWriteReturned(long startNanoTime) {
    long took = System.nanoTime() - startNanoTime;
    if (took >= BLOCKED_WRITE_NANOS) {
      onBackpressure(epochNanos() - took, took);
    }
  }

  private void captureResponse(byte b) {
    if (mode == ResponseMode.EVENT_STREAM) {
      completion.acceptEventStream(b);
    } else {
      completion.acceptBody(b);
    }
  }

  static long epochNanos() {
    Instant now = Instant.now();
    return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
  }
}
