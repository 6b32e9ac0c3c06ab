package dev.llmlat.engine;

import static dev.llmlat.scheduler.SchedulerAttributes.*;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.enginetelemetry.EngineTelemetry;
import dev.llmlat.scheduler.RequestInfo;
import dev.llmlat.scheduler.SchedulerTracer;
import dev.llmlat.semconv.LlmlatAttributes;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The scheduler under more load than its limits admit, checked on what it exported: each request's
 * KV tokens are rebuilt from the steps' per-request token counts and its preemptions, so the blocks
 * in use, the running set and each step's tokens are known independently of the scheduler's own
 * bookkeeping; none may exceed its limit, and each step span reports the state as rebuilt.
 */
class SchedulerLimitsTest {
  private static final AttributeKey<Long> RUNNING =
      AttributeKey.longKey(LlmlatAttributes.SCHEDULER_RUNNING);
  private static final AttributeKey<Long> WAITING =
      AttributeKey.longKey(LlmlatAttributes.SCHEDULER_WAITING);
  private static final AttributeKey<Long> KV_USED =
      AttributeKey.longKey(LlmlatAttributes.SCHEDULER_KV_BLOCKS_USED);
  private static final AttributeKey<Long> KV_TOTAL =
      AttributeKey.longKey(LlmlatAttributes.SCHEDULER_KV_BLOCKS_TOTAL);
  private static final AttributeKey<Long> TOKEN_BUDGET =
      AttributeKey.longKey(LlmlatAttributes.SCHEDULER_TOKEN_BUDGET);
  private static final AttributeKey<Long> MAX_SEQS =
      AttributeKey.longKey(LlmlatAttributes.SCHEDULER_MAX_SEQS);

  @Test
  void prefillFirstKeepsToMaxNumSeqsAndTheTokenBudget() throws Exception {
    // plenty of KV: the sequence limit binds; prompts of 24..64 tokens, at most 100 tokens per
    // prefill step
    EngineConfig config =
        EngineConfig.builder()
            .port(0)
            .maxNumSeqs(4)
            .maxNumBatchedTokens(100)
            .kvBlockSize(16)
            .kvBlocks(256)
            .timeScale(0.002)
            .build();
    List<Step> steps = run(config, 40, 1);
    assertThat(steps)
        .anySatisfy(
            s ->
                assertThat(s.running == 4 && s.waiting > 0)
                    .as("a full batch with requests waiting")
                    .isTrue());
    assertThat(steps)
        .anySatisfy(
            s ->
                assertThat(s.prefillTokens)
                    .as("several prompts in one prefill step")
                    .isGreaterThan(64));
  }

  @Test
  void chunkedPrefillKeepsToTheTokenBudgetAndTheKvBlocksPreemptingWhenDecodesNeedMore()
      throws Exception {
    // 12 blocks of 16 tokens for up to 3 requests of 24..64 prompt tokens: the batch is full, KV
    // binds, and preempts
    EngineConfig config =
        EngineConfig.builder()
            .port(0)
            .maxNumSeqs(3)
            .maxNumBatchedTokens(48)
            .chunkedPrefill(true)
            .kvBlockSize(16)
            .kvBlocks(12)
            .timeScale(0.002)
            .build();
    List<Step> steps = run(config, 40, 2);
    assertThat(steps)
        .anySatisfy(
            s ->
                assertThat(s.running == 3 && s.waiting > 0)
                    .as("a full batch with requests waiting")
                    .isTrue());
    assertThat(steps)
        .anySatisfy(
            s ->
                assertThat(s.prefillTokens + s.decodeTokens)
                    .as("a step filling the token budget")
                    .isEqualTo(48));
    assertThat(steps)
        .anySatisfy(
            s ->
                assertThat(s.kvUsed >= 0.9 * 12 && s.waiting > 0)
                    .as("KV nearly full with requests waiting")
                    .isTrue());
    assertThat(steps)
        .anySatisfy(s -> assertThat(s.preemptedBefore).as("a preemption").isPositive());
  }

  /** One step as exported, with the state rebuilt from the spans beside the state it reported. */
  private record Step(
      long index,
      long start,
      long prefillTokens,
      long decodeTokens,
      long running,
      long waiting,
      long kvUsed,
      int preemptedBefore) {}

  /**
   * Queues {@code requests} requests before the scheduler starts (so the plans do not depend on
   * when requests arrive), reads every stream to its end, and checks every step against the limits
   * and the rebuilt state; returns the steps.
   */
  private static List<Step> run(EngineConfig config, int requests, long seed) throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    Random random = new Random(seed);
    List<SpanData> spans;
    MonotonicClock clock = new MonotonicClock();
    try (EngineTelemetry telemetry =
        EngineTelemetry.builder("llm-engine").setExporter(exporter).build()) {
      SchedulerTracer tracer = SchedulerTracer.builder(telemetry.engine()).setClock(clock).build();
      try (ContinuousBatchingScheduler scheduler =
          new ContinuousBatchingScheduler(
              config, tracer, new GpuStepRecorder(telemetry.gpuTracer("test")), clock)) {
        List<EngineRequest> submitted = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
          // 24..64 prompt tokens, 8..24 output tokens: each fits the cache and the budget alone
          RequestInfo info =
              RequestInfo.chat(
                  "r" + i, config.model(), 24 + random.nextInt(41), 8 + random.nextInt(17));
          submitted.add(scheduler.submit(info, Map.of(), clock.now()));
        }
        scheduler.start();
        for (EngineRequest r : submitted) {
          TokenStream.Event e;
          do {
            e = r.stream.next(60, TimeUnit.SECONDS);
            assertThat(e).as("a token of %s within 60 s", r.id()).isNotNull();
            assertThat(e.error()).isNull();
          } while (!e.last());
        }
      }
      assertThat(telemetry.flush(Duration.ofSeconds(10))).isTrue();
      spans = exporter.getFinishedSpanItems();
    }
    SchedulerLimits limits = config.limits();
    List<SpanData> stepSpans =
        spans.stream()
            .filter(
                s ->
                    s.getName().equals(SPAN_STEP)
                        && "engine".equals(s.getResource().getAttribute(LAYER)))
            .sorted(Comparator.comparingLong(s -> s.getAttributes().get(STEP_INDEX)))
            .toList();
    Map<String, SpanData> requestSpans = new HashMap<>();
    for (SpanData s : spans) {
      if (s.getName().equals(SPAN_REQUEST)) {
        requestSpans.put(s.getSpanId(), s);
      }
    }
    assertThat(requestSpans).hasSize(requests);

    Map<String, Long> kv = new HashMap<>(); // request span id -> KV tokens held
    Map<String, Boolean> runningNow = new HashMap<>();
    List<Step> out = new ArrayList<>();
    long previousStart = Long.MIN_VALUE;
    for (SpanData step : stepSpans) {
      long start = step.getStartEpochNanos();
      int preempted = 0;
      for (SpanData r : requestSpans.values()) {
        for (EventData e : r.getEvents()) {
          // a preemption is planned after the previous step ended and before this one starts
          if (e.getName().equals(EVENT_PREEMPTED)
              && e.getEpochNanos() > previousStart
              && e.getEpochNanos() <= start) {
            kv.put(r.getSpanId(), 0L);
            runningNow.put(r.getSpanId(), false);
            preempted++;
          }
        }
        if (r.getEndEpochNanos() < start) {
          kv.remove(r.getSpanId()); // finished at the end of an earlier step: its blocks are free
          runningNow.remove(r.getSpanId());
        }
      }
      long prefill = 0;
      long decode = 0;
      for (LinkData link : step.getLinks()) {
        String id = link.getSpanContext().getSpanId();
        long p = link.getAttributes().get(STEP_PREFILL_TOKENS);
        long d = link.getAttributes().get(STEP_DECODE_TOKENS);
        kv.merge(id, p + d, Long::sum);
        runningNow.put(id, true);
        prefill += p;
        decode += d;
      }
      long blocks = kv.values().stream().mapToLong(t -> limits.blocksFor(t)).sum();
      long running = runningNow.values().stream().filter(b -> b).count();

      assertThat(prefill).isEqualTo(step.getAttributes().get(STEP_PREFILL_TOKENS));
      assertThat(decode).isEqualTo(step.getAttributes().get(STEP_DECODE_TOKENS));
      assertThat(prefill + decode)
          .as("tokens of step %s", step.getSpanId())
          .isLessThanOrEqualTo(limits.maxNumBatchedTokens());
      assertThat(running)
          .as("running at step %s", step.getSpanId())
          .isLessThanOrEqualTo(limits.maxNumSeqs());
      assertThat(blocks)
          .as("KV blocks at step %s", step.getSpanId())
          .isLessThanOrEqualTo(limits.kvBlocks());
      // the span reports the state as rebuilt, and the limits it ran under
      assertThat(step.getAttributes().get(KV_USED)).isEqualTo(blocks);
      assertThat(step.getAttributes().get(RUNNING)).isEqualTo(running);
      assertThat(step.getAttributes().get(WAITING)).isBetween(0L, (long) requests - running);
      assertThat(step.getAttributes().get(KV_TOTAL)).isEqualTo(limits.kvBlocks());
      assertThat(step.getAttributes().get(TOKEN_BUDGET)).isEqualTo(limits.maxNumBatchedTokens());
      assertThat(step.getAttributes().get(MAX_SEQS)).isEqualTo(limits.maxNumSeqs());
      out.add(
          new Step(
              step.getAttributes().get(STEP_INDEX),
              start,
              prefill,
              decode,
              running,
              step.getAttributes().get(WAITING),
              blocks,
              preempted));
      previousStart = start;
    }
    return out;
  }
}
