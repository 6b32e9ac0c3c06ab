package dev.llmlat.demo;

import com.google.protobuf.ByteString;
import dev.llmlat.semconv.LlmlatAttributes;
import dev.llmlat.semconv.LlmlatSpanNames;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.util.List;
import java.util.Random;

/**
 * A small, self-consistent set of requests across the three layers (gateway server span, engine
 * queue/prefill/decode spans, GPU step spans linked to the requests they served), shaped like what
 * the instrumentation emits, for the demo and tests.
 */
public final class DemoTraces {
  private static final long MS = 1_000_000L;

  private final Random random;
  private final long startUnixNanos;

  public DemoTraces(long seed, long startUnixNanos) {
    this.random = new Random(seed);
    this.startUnixNanos = startUnixNanos;
  }

  /** One generated request: its trace id and the spans of all its layers. */
  public record Request(String traceIdHex, ByteString traceId) {}

  /** {@code count} requests, two of them sharing each GPU step (batched), as one OTLP request. */
  public ExportTraceServiceRequest generate(int count, List<Request> generated) {
    ScopeSpans.Builder gateway = scope("io.opentelemetry.java-http-server");
    ScopeSpans.Builder engine = scope("dev.llmlat.scheduler");
    ScopeSpans.Builder gpu = scope("dev.llmlat.gpu");
    Span.Builder openStep = null;
    for (int i = 0; i < count; i++) {
      ByteString traceId = bytes(16);
      Request request =
          new Request(java.util.HexFormat.of().formatHex(traceId.toByteArray()), traceId);
      generated.add(request);
      long arrive = startUnixNanos + i * 40 * MS;
      int promptTokens = 128 << random.nextInt(4);
      long queue = (2 + random.nextInt(8)) * MS;
      long prefill = (8 + promptTokens / 64) * MS;
      long decode = 120 * MS;
      long engineStart = arrive + 2 * MS;
      long firstToken = engineStart + queue + prefill;
      long end = firstToken + decode;

      ByteString serverSpan = bytes(8);
      gateway.addSpans(
          span(
                  traceId,
                  serverSpan,
                  ByteString.EMPTY,
                  "POST /v1/chat/completions",
                  Span.SpanKind.SPAN_KIND_SERVER,
                  arrive,
                  end + MS)
              .addAttributes(str("http.request.method", "POST"))
              .addAttributes(str("url.path", "/v1/chat/completions"))
              .addAttributes(str("gen_ai.operation.name", "chat"))
              .addAttributes(str("gen_ai.request.model", "tinylm-1b"))
              .addAttributes(integer("gen_ai.request.max_tokens", 64))
              .addAttributes(
                  KeyValue.newBuilder()
                      .setKey("gen_ai.request.stream")
                      .setValue(AnyValue.newBuilder().setBoolValue(true)))
              .addEvents(
                  Span.Event.newBuilder()
                      .setTimeUnixNano(firstToken + MS)
                      .setName(LlmlatAttributes.EVENT_FIRST_CHUNK)));
      ByteString clientSpan = bytes(8);
      gateway.addSpans(
          span(
              traceId,
              clientSpan,
              serverSpan,
              "POST",
              Span.SpanKind.SPAN_KIND_CLIENT,
              arrive + MS,
              end + MS / 2));

      ByteString engineSpan = bytes(8);
      engine.addSpans(
          span(
                  traceId,
                  engineSpan,
                  clientSpan,
                  LlmlatSpanNames.REQUEST,
                  Span.SpanKind.SPAN_KIND_SERVER,
                  engineStart,
                  end)
              .addAttributes(str("gen_ai.request.model", "tinylm-1b"))
              .addAttributes(integer("gen_ai.usage.input_tokens", promptTokens))
              .addAttributes(integer("gen_ai.usage.output_tokens", 64))
              .addAttributes(dbl("gen_ai.latency.time_in_queue", queue / 1e9))
              .addAttributes(
                  dbl("gen_ai.latency.time_to_first_token", (firstToken - engineStart) / 1e9)));
      engine.addSpans(
          span(
              traceId,
              bytes(8),
              engineSpan,
              "queue",
              Span.SpanKind.SPAN_KIND_INTERNAL,
              engineStart,
              engineStart + queue));
      ByteString prefillSpan = bytes(8);
      engine.addSpans(
          span(
                  traceId,
                  prefillSpan,
                  engineSpan,
                  "prefill",
                  Span.SpanKind.SPAN_KIND_INTERNAL,
                  engineStart + queue,
                  firstToken)
              .addAttributes(integer(LlmlatAttributes.PREFILL_TOKENS, promptTokens)));
      engine.addSpans(
          span(
                  traceId,
                  bytes(8),
                  engineSpan,
                  "decode",
                  Span.SpanKind.SPAN_KIND_INTERNAL,
                  firstToken,
                  end)
              .addAttributes(integer(LlmlatAttributes.DECODE_TOKENS, 64)));

      // GPU: one step per prefill; consecutive pairs of requests share a decode step.
      // A GPU step lives in the trace of the first request it served, linked to all of them.
      gpu.addSpans(
          span(
                  traceId,
                  bytes(8),
                  ByteString.EMPTY,
                  "step",
                  Span.SpanKind.SPAN_KIND_INTERNAL,
                  engineStart + queue + MS,
                  firstToken - MS)
              .addAttributes(integer(LlmlatAttributes.STEP_BATCH_SIZE, 1))
              .addAttributes(integer(LlmlatAttributes.STEP_PREFILL_TOKENS, promptTokens))
              .addAttributes(integer(LlmlatAttributes.GPU_KERNELS, 96 + promptTokens / 32))
              .addLinks(Span.Link.newBuilder().setTraceId(traceId).setSpanId(prefillSpan)));
      if (openStep == null) {
        openStep =
            span(
                    traceId,
                    bytes(8),
                    ByteString.EMPTY,
                    "step",
                    Span.SpanKind.SPAN_KIND_INTERNAL,
                    firstToken,
                    firstToken + 6 * MS)
                .addAttributes(integer(LlmlatAttributes.STEP_DECODE_TOKENS, 1));
        openStep.addLinks(Span.Link.newBuilder().setTraceId(traceId).setSpanId(engineSpan));
      } else {
        openStep.addLinks(Span.Link.newBuilder().setTraceId(traceId).setSpanId(engineSpan));
        openStep.addAttributes(integer(LlmlatAttributes.STEP_BATCH_SIZE, openStep.getLinksCount()));
        gpu.addSpans(openStep);
        openStep = null;
      }
    }
    if (openStep != null) {
      openStep.addAttributes(integer(LlmlatAttributes.STEP_BATCH_SIZE, openStep.getLinksCount()));
      gpu.addSpans(openStep);
    }
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(resource("llm-gateway", "gateway", gateway))
        .addResourceSpans(resource("llm-engine", "engine", engine))
        .addResourceSpans(resource("llm-engine", "gpu", gpu))
        .build();
  }

  private static ResourceSpans resource(String service, String layer, ScopeSpans.Builder spans) {
    return ResourceSpans.newBuilder()
        .setResource(
            Resource.newBuilder()
                .addAttributes(str("service.name", service))
                .addAttributes(str(LlmlatAttributes.LAYER, layer))
                .addAttributes(str(LlmlatAttributes.HOST_NAME, "demo-host")))
        .addScopeSpans(spans)
        .build();
  }

  private static ScopeSpans.Builder scope(String name) {
    return ScopeSpans.newBuilder()
        .setScope(InstrumentationScope.newBuilder().setName(name).setVersion("0.1.0"));
  }

  private static Span.Builder span(
      ByteString traceId,
      ByteString spanId,
      ByteString parent,
      String name,
      Span.SpanKind kind,
      long start,
      long end) {
    return Span.newBuilder()
        .setTraceId(traceId)
        .setSpanId(spanId)
        .setParentSpanId(parent)
        .setName(name)
        .setKind(kind)
        .setStartTimeUnixNano(start)
        .setEndTimeUnixNano(end);
  }

  private ByteString bytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return ByteString.copyFrom(b);
  }

  static KeyValue str(String k, String v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setStringValue(v))
        .build();
  }

  static KeyValue integer(String k, long v) {
    return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setIntValue(v)).build();
  }

  static KeyValue dbl(String k, double v) {
    return KeyValue.newBuilder()
        .setKey(k)
        .setValue(AnyValue.newBuilder().setDoubleValue(v))
        .build();
  }

  /** The trace ids of {@code requests} as a SQL list literal. */
  public static String sqlList(List<Request> requests) {
    return dev.llmlat.analyze.store.TraceReader.sqlList(
        requests.stream().map(Request::traceIdHex).toList());
  }
}
