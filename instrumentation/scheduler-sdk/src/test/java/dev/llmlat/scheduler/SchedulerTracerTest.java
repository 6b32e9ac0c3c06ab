package dev.llmlat.scheduler;

import static dev.llmlat.scheduler.SchedulerAttributes.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SchedulerTracerTest {
  private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String PARENT = "00f067aa0ba902b7";
  private static final long T0 = 1_795_969_885_782_000_000L;
  private static final long MS = 1_000_000L;

  private InMemorySpanExporter exporter;
  private OpenTelemetrySdk sdk;
  private SchedulerTracer tracer;

  @BeforeEach
  void setUp() {
    exporter = InMemorySpanExporter.create();
    sdk =
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .setResource(
                        Resource.getDefault()
                            .merge(
                                Resource.builder()
                                    .put("service.name", "test-engine")
                                    .put("llmlat.layer", "engine")
                                    .build()))
                    .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                    .build())
            .build();
    tracer = SchedulerTracer.builder(sdk).build();
  }

  @AfterEach
  void tearDown() {
    sdk.close();
  }

  @Test
  void requestSpanIsChildOfIncomingTraceparentWithFlags03() {
    RequestTrace r =
        tracer.admit(
            RequestInfo.chat("req-1", "tinylm", 16, 1),
            Map.of("TraceParent", "00-" + TRACE + "-" + PARENT + "-03"),
            T0);
    r.queued(T0);
    StepTrace step = tracer.newStep().prefill(r, 16).start(T0 + MS);
    step.end(T0 + 5 * MS);
    r.finish(FinishReason.LENGTH, T0 + 6 * MS);

    SpanData request = only(SPAN_REQUEST);
    assertThat(request.getTraceId()).isEqualTo(TRACE);
    assertThat(request.getParentSpanId()).isEqualTo(PARENT);
    assertThat(request.getParentSpanContext().isRemote()).isTrue();
    assertThat(request.getSpanContext().isSampled()).isTrue(); // bit 0 of 03
    assertThat(request.getKind()).isEqualTo(SpanKind.SERVER);
    assertThat(request.getResource().getAttribute(LAYER)).isEqualTo("engine");
    assertThat(request.getResource().getAttribute(AttributeKey.stringKey("service.name")))
        .isEqualTo("test-engine");
    assertThat(request.getAttributes().get(GEN_AI_USAGE_OUTPUT_TOKENS)).isEqualTo(1L);
    assertThat(only(SPAN_DECODE).getAttributes().get(DECODE_TOKENS)).isZero();
    assertThat(only(SPAN_DECODE).getAttributes().get(DECODE_TOKEN_DELTAS_NS)).isEmpty();
  }

  @Test
  void missingOrMalformedTraceparentStartsANewTrace() {
    RequestTrace none = tracer.admit(RequestInfo.chat("a", "m", 4, 1), Map.of(), T0);
    RequestTrace bad =
        tracer.admit(RequestInfo.chat("b", "m", 4, 1), Map.of("traceparent", "00-xyz-1-01"), T0);
    none.finish(FinishReason.STOP, T0 + MS);
    bad.finish(FinishReason.STOP, T0 + MS);
    assertThat(spans(SPAN_REQUEST))
        .hasSize(2)
        .allSatisfy(
            s -> {
              assertThat(s.getParentSpanContext().isValid()).isFalse();
              assertThat(s.getTraceId()).isNotEqualTo(TRACE);
            });
  }

  @Test
  void fullLifecycleWithChunkedPrefillBatchedDecodeAndLatencies() {
    RequestTrace a =
        tracer.admit(
            RequestInfo.chat("a", "tinylm", 100, 4),
            Map.of("traceparent", "00-" + TRACE + "-" + PARENT + "-01"),
            T0);
    a.queued(T0);
    RequestTrace b = tracer.admit(RequestInfo.chat("b", "tinylm", 30, 2), Map.of(), T0 + MS);
    b.queued(T0 + MS);

    // Step 0: first chunk of a (64 of 100 tokens). Step 1: rest of a + all of b (prefill).
    StepTrace s0 = tracer.newStep().prefill(a, 64).start(T0 + 2 * MS);
    assertThat(s0.kind()).isEqualTo(StepKind.PREFILL);
    s0.end(T0 + 10 * MS);
    assertThat(a.generatedTokens()).isZero();
    assertThat(a.prefillRemaining()).isEqualTo(36);
    StepTrace s1 = tracer.newStep().prefill(a, 36).prefill(b, 30).start(T0 + 10 * MS);
    s1.end(T0 + 20 * MS);
    assertThat(a.generatedTokens()).isEqualTo(1);
    assertThat(b.generatedTokens()).isEqualTo(1);
    // Decode steps: both, then both (b reaches 2 and finishes), then a alone.
    long[] ends = {T0 + 27 * MS, T0 + 35 * MS, T0 + 41 * MS};
    StepTrace s2 = tracer.newStep().decode(a).decode(b).start(T0 + 20 * MS);
    assertThat(s2.kind()).isEqualTo(StepKind.DECODE);
    s2.end(ends[0]);
    b.finish(FinishReason.LENGTH, ends[0] + MS);
    tracer.newStep().decode(a).start(ends[0]).end(ends[1]);
    tracer.newStep().decode(a).start(ends[1]).end(ends[2]);
    a.finish(FinishReason.LENGTH, ends[2] + MS);

    SpanData reqA = requestSpan("a");
    assertThat(reqA.getTraceId()).isEqualTo(TRACE);
    assertThat(reqA.getParentSpanId()).isEqualTo(PARENT);
    // Children of a: queue, two prefill chunks, decode; all under its request span.
    List<SpanData> children = childrenOf(reqA);
    assertThat(children)
        .extracting(SpanData::getName)
        .containsExactly(SPAN_QUEUE, SPAN_PREFILL, SPAN_PREFILL, SPAN_DECODE);
    SpanData queue = children.get(0);
    assertThat(queue.getStartEpochNanos()).isEqualTo(T0);
    assertThat(queue.getEndEpochNanos()).isEqualTo(T0 + 2 * MS);
    SpanData chunk0 = children.get(1);
    SpanData chunk1 = children.get(2);
    assertThat(chunk0.getAttributes().get(PREFILL_START_TOKEN)).isZero();
    assertThat(chunk0.getAttributes().get(PREFILL_TOKENS)).isEqualTo(64L);
    assertThat(chunk1.getAttributes().get(PREFILL_START_TOKEN)).isEqualTo(64L);
    assertThat(chunk1.getAttributes().get(PREFILL_CHUNK_INDEX)).isEqualTo(1L);
    assertThat(chunk0.getLinks())
        .extracting(l -> l.getSpanContext().getSpanId())
        .containsExactly(s0.spanContext().getSpanId());
    assertThat(chunk1.getAttributes().get(STEP_SPAN_ID)).isEqualTo(s1.spanContext().getSpanId());
    SpanData decode = children.get(3);
    assertThat(decode.getStartEpochNanos()).isEqualTo(T0 + 20 * MS); // first token ends prefill
    assertThat(decode.getEndEpochNanos()).isEqualTo(ends[2]);
    assertThat(decode.getAttributes().get(DECODE_TOKENS)).isEqualTo(3L);
    List<Long> deltas = decode.getAttributes().get(DECODE_TOKEN_DELTAS_NS);
    assertThat(deltas).containsExactly(7 * MS, 8 * MS, 6 * MS);
    assertThat(DecodeTokenTimes.decode(decode.getStartEpochNanos(), deltas)).containsExactly(ends);
    assertThat(a.decodeTokenTimes()).containsExactly(ends);

    // vLLM's attributes, in seconds.
    assertThat(reqA.getAttributes().get(LATENCY_TIME_IN_QUEUE)).isCloseTo(0.002, within());
    assertThat(reqA.getAttributes().get(LATENCY_TIME_TO_FIRST_TOKEN)).isCloseTo(0.020, within());
    assertThat(reqA.getAttributes().get(LATENCY_TIME_IN_MODEL_PREFILL)).isCloseTo(0.018, within());
    assertThat(reqA.getAttributes().get(LATENCY_TIME_IN_MODEL_DECODE)).isCloseTo(0.021, within());
    assertThat(reqA.getAttributes().get(LATENCY_TIME_IN_MODEL_INFERENCE))
        .isCloseTo(0.039, within());
    assertThat(reqA.getAttributes().get(LATENCY_E2E)).isCloseTo(0.042, within());
    assertThat(reqA.getAttributes().get(LATENCY_TIME_IN_SCHEDULER))
        .isCloseTo(0.039, within()); // 8+10+7+8+6 ms
    assertThat(reqA.getAttributes().get(GEN_AI_USAGE_INPUT_TOKENS)).isEqualTo(100L);
    assertThat(reqA.getAttributes().get(GEN_AI_USAGE_PROMPT_TOKENS)).isEqualTo(100L);
    assertThat(reqA.getAttributes().get(GEN_AI_USAGE_OUTPUT_TOKENS)).isEqualTo(4L);
    assertThat(reqA.getAttributes().get(GEN_AI_USAGE_COMPLETION_TOKENS)).isEqualTo(4L);
    assertThat(reqA.getAttributes().get(GEN_AI_REQUEST_MODEL)).isEqualTo("tinylm");
    assertThat(reqA.getAttributes().get(GEN_AI_REQUEST_ID)).isEqualTo("a");
    assertThat(reqA.getAttributes().get(GEN_AI_REQUEST_MAX_TOKENS)).isEqualTo(4L);
    assertThat(reqA.getAttributes().get(GEN_AI_RESPONSE_FINISH_REASONS)).containsExactly("length");
    assertThat(reqA.getEvents()).extracting(EventData::getName).containsExactly(EVENT_FIRST_TOKEN);
    assertThat(reqA.getEvents().get(0).getEpochNanos()).isEqualTo(T0 + 20 * MS);

    // The mixed-batch step: child of the first request served, linked to both requests.
    SpanData step1 = stepSpan(s1);
    assertThat(step1.getTraceId()).isEqualTo(TRACE);
    assertThat(step1.getParentSpanId()).isEqualTo(reqA.getSpanId());
    assertThat(step1.getLinks())
        .extracting(LinkData::getSpanContext)
        .containsExactly(reqA.getSpanContext(), requestSpan("b").getSpanContext());
    assertThat(step1.getLinks().get(0).getAttributes().get(STEP_PREFILL_TOKENS)).isEqualTo(36L);
    assertThat(step1.getAttributes().get(STEP_BATCH_SIZE)).isEqualTo(2L);
    assertThat(step1.getAttributes().get(STEP_PREFILL_TOKENS)).isEqualTo(66L);
    assertThat(step1.getAttributes().get(STEP_DECODE_TOKENS)).isZero();
    assertThat(step1.getAttributes().get(STEP_KIND)).isEqualTo("prefill");
    assertThat(step1.getAttributes().get(TRACE_IDS))
        .containsExactly(TRACE, requestSpan("b").getTraceId());
    assertThat(step1.getAttributes().get(NVTX_TEXT))
        .isEqualTo(s1.nvtxRange().text())
        .isEqualTo(
            "llmlat step="
                + step1.getSpanId()
                + " kind=prefill traces="
                + TRACE
                + ","
                + requestSpan("b").getTraceId());
    SpanData step2 = stepSpan(s2);
    assertThat(step2.getAttributes().get(STEP_DECODE_TOKENS)).isEqualTo(2L);
    assertThat(step2.getAttributes().get(STEP_KIND)).isEqualTo("decode");
    assertThat(step2.getEndEpochNanos() - step2.getStartEpochNanos()).isEqualTo(7 * MS);
    assertThat(spans(SPAN_STEP))
        .extracting(s -> s.getAttributes().get(STEP_INDEX))
        .containsExactly(0L, 1L, 2L, 3L, 4L);
  }

  @Test
  void mixedStepKindWhenPrefillAndDecodeShareAStep() {
    RequestTrace a = tracer.admit(RequestInfo.chat("a", "m", 8, 3), Map.of(), T0);
    RequestTrace b = tracer.admit(RequestInfo.chat("b", "m", 8, 3), Map.of(), T0);
    tracer.newStep().prefill(a, 8).start(T0).end(T0 + MS);
    StepTrace mixed = tracer.newStep().decode(a).prefill(b, 4).start(T0 + MS);
    assertThat(mixed.kind()).isEqualTo(StepKind.MIXED);
    assertThat(mixed.nvtxRange().text())
        .startsWith(
            "llmlat step="
                + mixed.spanContext().getSpanId()
                + " kind=mixed traces="
                + a.traceId()
                + ",");
    mixed.end(T0 + 2 * MS);
    assertThatThrownBy(() -> tracer.newStep().decode(b))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> tracer.newStep().prefill(b, 5))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> tracer.newStep().decode(a).decode(a))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> tracer.newStep().start()).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void preemptionRecordsEventRequeuesAndRecomputesPromptPlusGeneratedTokens() {
    RequestTrace r = tracer.admit(RequestInfo.chat("p", "m", 10, 4), Map.of(), T0);
    r.queued(T0);
    tracer.newStep().prefill(r, 10).start(T0 + MS).end(T0 + 2 * MS); // token 1
    tracer.newStep().decode(r).start(T0 + 2 * MS).end(T0 + 3 * MS); // token 2
    r.preempted("kv_cache_full", T0 + 4 * MS);
    assertThat(r.prefillRemaining()).isEqualTo(12); // prompt + 2 generated
    assertThatThrownBy(() -> tracer.newStep().decode(r))
        .isInstanceOf(IllegalArgumentException.class);
    tracer
        .newStep()
        .prefill(r, 12)
        .start(T0 + 9 * MS)
        .end(T0 + 11 * MS); // recompute yields token 3
    assertThat(r.generatedTokens()).isEqualTo(3);
    tracer.newStep().decode(r).start(T0 + 11 * MS).end(T0 + 12 * MS); // token 4
    r.finish(FinishReason.LENGTH, T0 + 12 * MS);

    SpanData request = only(SPAN_REQUEST);
    assertThat(request.getEvents())
        .extracting(EventData::getName)
        .containsExactly(EVENT_FIRST_TOKEN, EVENT_PREEMPTED);
    EventData preempted = request.getEvents().get(1);
    assertThat(preempted.getEpochNanos()).isEqualTo(T0 + 4 * MS);
    assertThat(preempted.getAttributes().get(PREEMPTION_REASON)).isEqualTo("kv_cache_full");
    assertThat(preempted.getAttributes().get(PREEMPTION_GENERATED_TOKENS)).isEqualTo(2L);
    assertThat(request.getAttributes().get(REQUEST_PREEMPTIONS)).isEqualTo(1L);
    assertThat(request.getAttributes().get(QUEUE_TOTAL_NS)).isEqualTo(MS + 5 * MS);
    assertThat(request.getAttributes().get(LATENCY_TIME_IN_QUEUE)).isCloseTo(0.001, within());

    List<SpanData> queues = spans(SPAN_QUEUE);
    assertThat(queues).hasSize(2);
    assertThat(queues.get(1).getAttributes().get(QUEUE_REQUEUED)).isTrue();
    assertThat(queues.get(1).getStartEpochNanos()).isEqualTo(T0 + 4 * MS);
    assertThat(queues.get(1).getEndEpochNanos()).isEqualTo(T0 + 9 * MS);
    List<SpanData> prefills = spans(SPAN_PREFILL);
    assertThat(prefills)
        .extracting(s -> s.getAttributes().get(PREFILL_RECOMPUTE))
        .containsExactly(false, true);
    assertThat(prefills.get(1).getAttributes().get(PREFILL_TOKENS)).isEqualTo(12L);
    // Decode keeps one span across the preemption; the stall shows in the deltas.
    SpanData decode = only(SPAN_DECODE);
    assertThat(decode.getAttributes().get(DECODE_TOKEN_DELTAS_NS)).containsExactly(MS, 8 * MS, MS);
    assertThat(request.getAttributes().get(GEN_AI_USAGE_OUTPUT_TOKENS)).isEqualTo(4L);
  }

  @Test
  void abortEndsOpenSpansWithErrorStatus() {
    RequestTrace r = tracer.admit(RequestInfo.chat("x", "m", 10, 4), Map.of(), T0);
    r.queued(T0);
    r.abort("client_disconnected", T0 + 3 * MS);
    r.finish(FinishReason.LENGTH, T0 + 9 * MS); // ignored: already ended
    SpanData request = only(SPAN_REQUEST);
    assertThat(request.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(request.getAttributes().get(ERROR_TYPE)).isEqualTo("client_disconnected");
    assertThat(request.getAttributes().get(GEN_AI_RESPONSE_FINISH_REASONS))
        .containsExactly("abort");
    assertThat(request.getAttributes().get(LATENCY_TIME_TO_FIRST_TOKEN)).isNull();
    assertThat(request.getEndEpochNanos()).isEqualTo(T0 + 3 * MS);
    assertThat(only(SPAN_QUEUE).getEndEpochNanos()).isEqualTo(T0 + 3 * MS);
    assertThat(r.isEnded()).isTrue();
  }

  private static org.assertj.core.data.Offset<Double> within() {
    return org.assertj.core.data.Offset.offset(1e-9);
  }

  private SpanData requestSpan(String id) {
    return spans(SPAN_REQUEST).stream()
        .filter(s -> id.equals(s.getAttributes().get(GEN_AI_REQUEST_ID)))
        .findFirst()
        .orElseThrow();
  }

  private SpanData stepSpan(StepTrace step) {
    SpanContext ctx = step.spanContext();
    return spans(SPAN_STEP).stream()
        .filter(s -> s.getSpanId().equals(ctx.getSpanId()))
        .findFirst()
        .orElseThrow();
  }

  private List<SpanData> childrenOf(SpanData parent) {
    return exporter.getFinishedSpanItems().stream()
        .filter(
            s -> s.getParentSpanId().equals(parent.getSpanId()) && !s.getName().equals(SPAN_STEP))
        .sorted(
            Comparator.comparingLong(SpanData::getStartEpochNanos)
                .thenComparing(SpanData::getName, Comparator.reverseOrder()))
        .collect(Collectors.toList());
  }

  private List<SpanData> spans(String name) {
    return exporter.getFinishedSpanItems().stream()
        .filter(s -> s.getName().equals(name))
        .sorted(Comparator.comparingLong(SpanData::getStartEpochNanos))
        .collect(Collectors.toList());
  }

  private SpanData only(String name) {
    List<SpanData> found = spans(name);
    assertThat(found).hasSize(1);
    return found.get(0);
  }
}
