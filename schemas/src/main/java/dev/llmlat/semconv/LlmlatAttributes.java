package dev.llmlat.semconv;

/**
 * The attribute names every llmlat layer writes and the ingester and analyzer read. The prose
 * contract is schemas/kafka/README.md; names follow the OpenTelemetry GenAI conventions where they
 * exist, vLLM's {@code gen_ai.latency.*} for the engine-level breakdown, and {@code llmlat.*} for
 * the rest.
 */
public final class LlmlatAttributes {
  private LlmlatAttributes() {}

  // Resource
  /** Which layer emitted the span: {@code client | gateway | engine | gpu | ebpf}. */
  public static final String LAYER = "llmlat.layer";

  /** A client of the gateway that sends trace context (llmlat load, a user's benchmark client). */
  public static final String LAYER_CLIENT = "client";

  public static final String LAYER_GATEWAY = "gateway";
  public static final String LAYER_ENGINE = "engine";
  public static final String LAYER_GPU = "gpu";
  public static final String LAYER_EBPF = "ebpf";

  // Steps (engine `step` spans and GPU step spans)
  public static final String STEP_KIND = "llmlat.step.kind"; // prefill | decode | mixed
  public static final String STEP_BATCH_SIZE = "llmlat.step.batch_size";
  public static final String STEP_PREFILL_TOKENS = "llmlat.step.prefill_tokens";
  public static final String STEP_DECODE_TOKENS = "llmlat.step.decode_tokens";

  /** The engine step span id (16 hex) a GPU span belongs to. */
  public static final String STEP_SPAN_ID = "llmlat.step.span_id";

  public static final String STEP_NAME = "llmlat.step.name";

  /** String array: the request trace ids (32 hex) a step served. */
  public static final String TRACE_IDS = "llmlat.trace_ids";

  public static final String NVTX_TEXT = "llmlat.nvtx.text";

  // Scheduler state at a step's start (on engine step spans): what can keep a waiting request out
  /** Requests running (in the batch) when the step was scheduled. */
  public static final String SCHEDULER_RUNNING = "llmlat.scheduler.running";

  /** Requests left waiting when the step was scheduled. */
  public static final String SCHEDULER_WAITING = "llmlat.scheduler.waiting";

  public static final String SCHEDULER_KV_BLOCKS_USED = "llmlat.scheduler.kv_blocks.used";
  public static final String SCHEDULER_KV_BLOCKS_TOTAL = "llmlat.scheduler.kv_blocks.total";

  /** Tokens one step may schedule (vLLM's max_num_batched_tokens). */
  public static final String SCHEDULER_TOKEN_BUDGET = "llmlat.scheduler.token_budget";

  /** Requests one step may run (vLLM's max_num_seqs). */
  public static final String SCHEDULER_MAX_SEQS = "llmlat.scheduler.max_seqs";

  // GPU
  /** On per-kernel spans only: {@code kernel | memcpy | memset}; routes them to gpu_kernels. */
  public static final String GPU_KIND = "llmlat.gpu.kind";

  public static final String GPU_DEVICE = "gpu.device.id";
  public static final String GPU_STREAM = "gpu.stream.id";
  public static final String CUDA_CORRELATION_ID = "cuda.correlation_id";
  public static final String GPU_BYTES = "llmlat.gpu.bytes";
  public static final String GPU_BUSY_NS = "llmlat.gpu.busy_ns";
  public static final String GPU_KERNELS = "llmlat.gpu.kernels";
  public static final String GPU_FIRST_KERNEL_START = "llmlat.gpu.first_kernel_start_unix_nano";
  public static final String GPU_LAST_KERNEL_END = "llmlat.gpu.last_kernel_end_unix_nano";

  /** {@code nsys | kineto | cudaevent | ebpf | engine}. */
  public static final String GPU_SOURCE = "llmlat.gpu.source";

  /**
   * How the span's timestamps became Unix ns, e.g. {@code
   * nsys:TARGET_INFO_SESSION_START_TIME.utcEpochNs+start}.
   */
  public static final String CLOCK_RULE = "llmlat.clock.rule";

  public static final String THREAD_ID = "thread.id";

  // KV-cache transfers (GPU-layer llmlat.kv_send / llmlat.kv_recv spans). The span covers the CPU
  // range and its activities: a send returns at enqueue, the KV is sent when its kernel ends.
  /** The CPU range's own start (the instance began the send or receive). */
  public static final String KV_RANGE_START = "llmlat.kv.range_start_unix_nano";

  /** The CPU range's own end. */
  public static final String KV_RANGE_END = "llmlat.kv.range_end_unix_nano";

  /**
   * First start of the transfer kernels (NCCL send/recv) launched in the range; absent when none.
   */
  public static final String KV_KERNEL_START = "llmlat.kv.kernel_start_unix_nano";

  /** Last end of those kernels: wire time = overlap of the send's and the receive's kernels. */
  public static final String KV_KERNEL_END = "llmlat.kv.kernel_end_unix_nano";

  /** Bytes of KV cache moved, where the export says. */
  public static final String KV_BYTES = "llmlat.kv.bytes";

  /**
   * Set by the analyzer, never by a producer: the trace id a span had before the halves of its
   * disaggregated request, which the engine put in separate traces, were joined by the engine's own
   * key.
   */
  public static final String JOINED_FROM_TRACE_ID = "llmlat.joined_from_trace_id";

  /**
   * The instance's host (OpenTelemetry's name): on kv spans with {@code process.pid} and {@link
   * #GPU_DEVICE}.
   */
  public static final String HOST_NAME = "host.name";

  // Gateway
  /** Event on the gateway server span: the first content chunk was written to the client. */
  public static final String EVENT_FIRST_CHUNK = "gen_ai.first_chunk";

  public static final String GATEWAY_FIRST_CHUNK_NS = "llmlat.gateway.first_chunk_unix_nano";
  public static final String GATEWAY_CHUNKS = "llmlat.gateway.chunks";

  /**
   * On the gateway server span when the extension cannot see the response body on this server
   * stack: the server's name (the first chunk is then unknown).
   */
  public static final String GATEWAY_SERVER = "llmlat.gateway.server";

  /**
   * Event on the gateway's SERVER span (it lasts the whole stream; also on the upstream CLIENT span
   * while that is open): the gateway's HTTP client received the engine's first content chunk.
   */
  public static final String EVENT_UPSTREAM_FIRST_CHUNK = "llmlat.upstream.first_chunk";

  /**
   * On that event: the upstream CLIENT span's id (the parent the engine received in traceparent).
   */
  public static final String UPSTREAM_SPAN_ID = "llmlat.upstream.span_id";

  /**
   * The tenant a request is served for (opt-in, never a secret): a header's value, the OpenAI
   * request's {@code user} field, or a hash of the API key. On the gateway's SERVER span, the
   * client layer's span or the engine's request span.
   */
  public static final String TENANT = "llmlat.tenant";

  // The gateway's upstream connection: events on the upstream CLIENT span, or on the gateway's
  // SERVER span
  // (with UPSTREAM_SPAN_ID where known) when the client stack gets its connection before its CLIENT
  // span starts
  /** Event: the gateway's HTTP client asked its pool for a connection to the engine. */
  public static final String EVENT_UPSTREAM_ACQUIRE_START = "llmlat.upstream.acquire_start";

  /** Event: the HTTP client got its connection (a pooled one, or a new one connected for it). */
  public static final String EVENT_UPSTREAM_ACQUIRED = "llmlat.upstream.acquired";

  /**
   * On the acquire events: the pool, as the client names its key (the route, or
   * scheme://host:port).
   */
  public static final String UPSTREAM_POOL = "llmlat.upstream.pool";

  /** On the acquire events: the most connections the pool opens to that destination. */
  public static final String UPSTREAM_POOL_MAX = "llmlat.upstream.pool.max";

  /** On the acquire start: requests already waiting for a connection of that pool. */
  public static final String UPSTREAM_POOL_PENDING = "llmlat.upstream.pool.pending";

  /** On the acquire start: the pool's connections in use. */
  public static final String UPSTREAM_POOL_LEASED = "llmlat.upstream.pool.leased";

  /** On the acquired event: true for a pooled connection, false for one connected for this call. */
  public static final String UPSTREAM_CONNECTION_REUSED = "llmlat.upstream.connection.reused";

  /** Event: TCP connect to the engine began. */
  public static final String EVENT_UPSTREAM_CONNECT_START = "llmlat.upstream.connect_start";

  /** Event: TCP connect finished. */
  public static final String EVENT_UPSTREAM_CONNECTED = "llmlat.upstream.connected";

  /** Event: the TLS handshake began. */
  public static final String EVENT_UPSTREAM_TLS_START = "llmlat.upstream.tls_start";

  /** Event: the TLS handshake finished. */
  public static final String EVENT_UPSTREAM_TLS_DONE = "llmlat.upstream.tls_done";

  /** Event: the request's headers were written to the connection. */
  public static final String EVENT_UPSTREAM_HEADERS_WRITTEN = "llmlat.upstream.headers_written";

  /** Event: the request's body was written to the connection (the request is on the wire). */
  public static final String EVENT_UPSTREAM_BODY_WRITTEN = "llmlat.upstream.body_written";

  /**
   * Where the acquire events are (the CLIENT span, else the SERVER span): the client stack whose
   * connection hooks saw the call ({@code reactor-netty}, {@code apache-httpclient-5}, {@code
   * jetty-client-12}, {@code jdk-http-client}, {@code vertx-http-client}); absent, the connection's
   * set-up is unknown. The JDK client never waits for a connection (it bounds only the idle ones):
   * its acquire events carry no pool size nor pending count.
   */
  public static final String UPSTREAM_CLIENT = "llmlat.upstream.client";

  // Backpressure on the way back: the gateway could not write to its client (the client read
  // slowly)
  /**
   * Event on the gateway's SERVER span: its connection to the client stopped taking writes (Netty:
   * the channel turned unwritable, its pending response bytes over the write buffer's high-water
   * mark); the event's time is when it began, {@link #GATEWAY_BACKPRESSURE_DURATION_NS} how long it
   * lasted (until writable again, or the connection's close). The first 32 per request; the span's
   * count and total cover all of them.
   */
  public static final String EVENT_GATEWAY_BACKPRESSURE = "llmlat.gateway.backpressure";

  /** On that event: how long the gateway could not write to its client, in ns. */
  public static final String GATEWAY_BACKPRESSURE_DURATION_NS =
      "llmlat.gateway.backpressure.duration_ns";

  /**
   * On that event: what was full when the gateway could not write to its client. {@code socket}:
   * the connection's socket (its send buffer, or the bytes queued before it), the client not
   * reading the connection fast enough (HTTP/1.x: always; HTTP/2: neither flow-control window
   * exhausted). {@code http2_stream_window}: the request's HTTP/2 stream flow-control window, the
   * client not granting more for this stream (no {@code WINDOW_UPDATE}). {@code
   * http2_connection_window}: the HTTP/2 connection's flow-control window, shared by all its
   * streams. Taken as the block began. Absent where the stack does not tell (servlet containers).
   */
  public static final String GATEWAY_BACKPRESSURE_CAUSE = "llmlat.gateway.backpressure.cause";

  /** {@link #GATEWAY_BACKPRESSURE_CAUSE}: the connection's socket. */
  public static final String GATEWAY_BACKPRESSURE_CAUSE_SOCKET = "socket";

  /** {@link #GATEWAY_BACKPRESSURE_CAUSE}: the request's HTTP/2 stream flow-control window. */
  public static final String GATEWAY_BACKPRESSURE_CAUSE_HTTP2_STREAM_WINDOW = "http2_stream_window";

  /** {@link #GATEWAY_BACKPRESSURE_CAUSE}: the HTTP/2 connection's flow-control window. */
  public static final String GATEWAY_BACKPRESSURE_CAUSE_HTTP2_CONNECTION_WINDOW =
      "http2_connection_window";

  /**
   * On the gateway's SERVER span: how many times it could not write to its client while answering.
   * Present (0 included) only where the server stack's writability is observed (Netty 4.1/4.2
   * HTTP/1.x, and HTTP/2 streams turned into HTTP/1.x objects: Reactor Netty, Spring Cloud Gateway
   * WebFlux, Vert.x HTTP/1.x; Jakarta Servlet containers); absent, backpressure is unknown (Jetty
   * 12's core handlers, JDK HttpServer, other HTTP/2 servers).
   */
  public static final String GATEWAY_BACKPRESSURE_COUNT = "llmlat.gateway.backpressure.count";

  /** On the gateway's SERVER span: the total time it could not write to its client, in ns. */
  public static final String GATEWAY_BACKPRESSURE_TOTAL_NS = "llmlat.gateway.backpressure.total_ns";

  // Engine requests (the scheduler SDK's request, queue, prefill and decode spans and their events)
  /** Monotonic step number within one scheduler tracer. */
  public static final String STEP_INDEX = "llmlat.step.index";

  /** Times the request was preempted (KV cache exhausted) and re-queued for recompute. */
  public static final String REQUEST_PREEMPTIONS = "llmlat.request.preemptions";

  /** All time spent waiting, re-queues after preemption included, in ns. */
  public static final String QUEUE_TOTAL_NS = "llmlat.queue.total_ns";

  /** On a queue span: true when it follows a preemption. */
  public static final String QUEUE_REQUEUED = "llmlat.queue.requeued";

  public static final String PREFILL_CHUNK_INDEX = "llmlat.prefill.chunk_index";

  /** Offset of the chunk's first token in the sequence being prefilled. */
  public static final String PREFILL_START_TOKEN = "llmlat.prefill.start_token";

  public static final String PREFILL_TOKENS = "llmlat.prefill.tokens";

  /** True when the chunk recomputes KV lost to a preemption. */
  public static final String PREFILL_RECOMPUTE = "llmlat.prefill.recompute";

  /** On a decode span: tokens produced after the first one. */
  public static final String DECODE_TOKENS = "llmlat.decode.tokens";

  /** On a decode span: token times, delta-encoded in ns (first from the span's start). */
  public static final String DECODE_TOKEN_DELTAS_NS = "llmlat.decode.token_deltas_ns";

  /** On the request span: the first output token left the engine. */
  public static final String EVENT_FIRST_TOKEN = "llmlat.first_token";

  /** On the request span: the request was preempted. */
  public static final String EVENT_PREEMPTED = "llmlat.preempted";

  public static final String PREEMPTION_REASON = "llmlat.preemption.reason";

  /** On the preemption event: output tokens generated so far (recomputed with the prompt). */
  public static final String PREEMPTION_GENERATED_TOKENS = "llmlat.preemption.generated_tokens";

  // Client (a CLIENT span per request, the trace's root; its span id is the traceparent parent)
  /** Event: the response headers arrived. */
  public static final String EVENT_CLIENT_RESPONSE_HEADERS = "llmlat.client.response_headers";

  /**
   * Event: the first content chunk (a non-empty text delta) arrived: the end of the client's TTFT.
   */
  public static final String EVENT_CLIENT_FIRST_CHUNK = "llmlat.client.first_chunk";

  /** Content chunks received. */
  public static final String CLIENT_CHUNKS = "llmlat.client.chunks";

  /**
   * Long array: the arrival of every content chunk after the first, each as nanoseconds after the
   * previous one (the first delta counts from the first chunk).
   */
  public static final String CLIENT_CHUNK_DELTAS_NS = "llmlat.client.chunk_deltas_ns";
}
