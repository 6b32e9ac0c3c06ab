package dev.llmlat.load;

import com.google.protobuf.ByteString;
import dev.llmlat.otlpkafka.OtlpAttributes;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.Span;
import io.opentelemetry.proto.trace.v1.Status;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HexFormat;

/**
 * One CLIENT span per measured request, the root of its trace (schemas/kafka/README.md, "Client
 * span"): start when sent, end when the response ended; HTTP client and {@code gen_ai.*} request
 * attributes; the events {@code llmlat.client.response_headers} and {@code
 * llmlat.client.first_chunk}; the content chunks' count and their gaps. Failures end with status
 * ERROR and {@code error.type}. No prompt or completion text.
 */
final class ClientSpans {
  static final InstrumentationScope SCOPE =
      InstrumentationScope.newBuilder().setName("dev.llmlat.load").build();
  private static final HexFormat HEX = HexFormat.of();

  private final LoadConfig config;
  private final WallClock clock;
  private final Resource resource;

  ClientSpans(LoadConfig config, WallClock clock) {
    this.config = config;
    this.clock = clock;
    this.resource =
        Resource.newBuilder()
            .addAttributes(OtlpAttributes.string("service.name", config.serviceName()))
            .addAttributes(
                OtlpAttributes.string(LlmlatAttributes.LAYER, LlmlatAttributes.LAYER_CLIENT))
            .addAttributes(OtlpAttributes.string(LlmlatAttributes.HOST_NAME, hostName()))
            .addAttributes(OtlpAttributes.integer("process.pid", ProcessHandle.current().pid()))
            .build();
  }

  Resource resource() {
    return resource;
  }

  Span span(RequestOutcome r) {
    Span.Builder s =
        Span.newBuilder()
            .setTraceId(ByteString.copyFrom(HEX.parseHex(r.traceId())))
            .setSpanId(ByteString.copyFrom(HEX.parseHex(r.spanId())))
            .setName(
                config.target().endpoint().operation()
                    + " "
                    + config.model()) // GenAI client spans: "{operation} {model}"
            .setKind(Span.SpanKind.SPAN_KIND_CLIENT)
            .setStartTimeUnixNano(clock.unixNanos(r.startNanos()))
            .setEndTimeUnixNano(clock.unixNanos(r.endNanos()))
            .addAttributes(OtlpAttributes.string("http.request.method", "POST"))
            .addAttributes(OtlpAttributes.string("url.full", config.target().url().toString()))
            .addAttributes(OtlpAttributes.string("server.address", config.target().url().getHost()))
            .addAttributes(OtlpAttributes.integer("server.port", config.target().port()))
            .addAttributes(
                OtlpAttributes.string(
                    "gen_ai.operation.name", config.target().endpoint().operation()))
            .addAttributes(OtlpAttributes.string("gen_ai.request.model", config.model()))
            .addAttributes(OtlpAttributes.integer("gen_ai.request.max_tokens", r.maxTokens()))
            .addAttributes(OtlpAttributes.integer(LlmlatAttributes.CLIENT_CHUNKS, r.chunks()));
    if (config.tenant() != null) {
      s.addAttributes(OtlpAttributes.string(LlmlatAttributes.TENANT, config.tenant()));
    }
    if (r.httpStatus() > 0) {
      s.addAttributes(OtlpAttributes.integer("http.response.status_code", r.httpStatus()));
    }
    if (r.usagePromptTokens() >= 0) {
      s.addAttributes(OtlpAttributes.integer("gen_ai.usage.input_tokens", r.usagePromptTokens()));
    }
    if (r.usageCompletionTokens() >= 0) {
      s.addAttributes(
          OtlpAttributes.integer("gen_ai.usage.output_tokens", r.usageCompletionTokens()));
    }
    if (r.chunks() > 0) {
      s.addAttributes(
          OtlpAttributes.integers(LlmlatAttributes.CLIENT_CHUNK_DELTAS_NS, r.chunkDeltasNanos()));
    }
    if (r.headersNanos() >= 0) {
      s.addEvents(
          Span.Event.newBuilder()
              .setName(LlmlatAttributes.EVENT_CLIENT_RESPONSE_HEADERS)
              .setTimeUnixNano(clock.unixNanos(r.headersNanos())));
    }
    if (r.chunks() > 0) {
      s.addEvents(
          Span.Event.newBuilder()
              .setName(LlmlatAttributes.EVENT_CLIENT_FIRST_CHUNK)
              .setTimeUnixNano(clock.unixNanos(r.chunkNanos()[0])));
    }
    if (r.failure() != null) {
      s.addAttributes(OtlpAttributes.string("error.type", r.failure().errorType()));
      s.setStatus(
          Status.newBuilder()
              .setCode(Status.StatusCode.STATUS_CODE_ERROR)
              .setMessage(r.failure().toString()));
    }
    return s.build();
  }

  // HOSTNAME where the shell exports it, else the resolver's name for this host
  private static String hostName() {
    String name = System.getenv("HOSTNAME");
    if (name != null && !name.isBlank()) {
      return name;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }
}
