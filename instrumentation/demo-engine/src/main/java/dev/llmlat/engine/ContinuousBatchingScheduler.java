package dev.llmlat.engine;

import dev.llmlat.scheduler.FinishReason;
import dev.llmlat.scheduler.RequestInfo;
import dev.llmlat.scheduler.RequestTrace;
import dev.llmlat.scheduler.SchedulerTracer;
import dev.llmlat.scheduler.StepBuilder;
import dev.llmlat.scheduler.StepTrace;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The engine loop on one thread: takes new requests, plans a step ({@link StepPlanner}), traces it
 * with the scheduler SDK (with the scheduler's state, so the analyzer can name the limit that kept
 * requests waiting), sleeps for the cost model's step time (scaled), then hands the tokens the step
 * produced to the requests' streams and retires finished requests.
 */
final class ContinuousBatchingScheduler implements AutoCloseable {
  /**
   * Counters for tests and logs: the largest step batch, running set, KV blocks in use and step
   * tokens seen.
   */
  record Stats(
      long steps,
      long maxBatchSize,
      long maxRunning,
      long maxKvBlocksUsed,
      long maxStepTokens,
      long preemptions,
      long finished) {}

  private static final String[] WORDS = {
    "the", "GPU", "kept", "every", "token", "on", "one", "trace", "and", "time"
  };

  private final EngineConfig config;
  private final SchedulerTracer tracer;
  private final GpuStepRecorder gpu;
  private final MonotonicClock clock;
  private final StepPlanner planner;
  private final LinkedBlockingQueue<EngineRequest> incoming = new LinkedBlockingQueue<>();
  private final Deque<EngineRequest> waiting = new ArrayDeque<>();
  private final List<EngineRequest> running = new ArrayList<>();
  private final Thread thread;
  private final AtomicLong steps = new AtomicLong();
  private final AtomicLong maxBatchSize = new AtomicLong();
  private final AtomicLong maxRunning = new AtomicLong();
  private final AtomicLong maxKvBlocksUsed = new AtomicLong();
  private final AtomicLong maxStepTokens = new AtomicLong();
  private final AtomicLong preemptions = new AtomicLong();
  private final AtomicLong finished = new AtomicLong();
  private volatile boolean stopping;

  ContinuousBatchingScheduler(
      EngineConfig config, SchedulerTracer tracer, GpuStepRecorder gpu, MonotonicClock clock) {
    this.config = config;
    this.tracer = tracer;
    this.gpu = gpu;
    this.clock = clock;
    this.planner = new StepPlanner(config);
    this.thread = new Thread(this::loop, "llmlat-scheduler");
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /**
   * Admits a request: starts its trace under the caller's {@code traceparent} and queues it.
   *
   * @throws IllegalArgumentException if prompt and output can never fit the KV cache, or (without
   *     chunked prefill) a step's token budget: the request could never finish
   */
  EngineRequest submit(RequestInfo info, Map<String, String> headers, long arrivalNanos) {
    if (stopping) {
      throw new IllegalStateException("the engine is shutting down");
    }
    SchedulerLimits limits = config.limits();
    long tokens = (long) info.promptTokens() + info.maxTokens();
    if (limits.blocksFor(tokens) > limits.kvBlocks()) {
      throw new IllegalArgumentException(
          "prompt ("
              + info.promptTokens()
              + " tokens) plus max_tokens ("
              + info.maxTokens()
              + ") exceed the KV cache ("
              + limits.kvBlocks()
              + " blocks of "
              + limits.kvBlockSize()
              + " tokens)");
    }
    // a preempted request re-prefills its prompt and its output so far in one step
    if (!config.chunkedPrefill() && tokens > limits.maxNumBatchedTokens()) {
      throw new IllegalArgumentException(
          "prompt ("
              + info.promptTokens()
              + " tokens) plus max_tokens ("
              + info.maxTokens()
              + ") exceed max_num_batched_tokens ("
              + limits.maxNumBatchedTokens()
              + "), the most one prefill may take without chunked prefill");
    }
    RequestTrace trace = tracer.admit(info, headers, arrivalNanos);
    trace.queued(clock.now());
    EngineRequest request = new EngineRequest(trace);
    incoming.add(request);
    return request;
  }

  /** The client went away: the request is dropped before the next step. */
  void cancel(EngineRequest request) {
    request.cancelled = true;
  }

  Stats stats() {
    return new Stats(
        steps.get(),
        maxBatchSize.get(),
        maxRunning.get(),
        maxKvBlocksUsed.get(),
        maxStepTokens.get(),
        preemptions.get(),
        finished.get());
  }

  private void loop() {
    while (!stopping) {
      try {
        if (waiting.isEmpty() && running.isEmpty()) {
          EngineRequest first = incoming.poll(50, TimeUnit.MILLISECONDS);
          if (first == null) {
            continue;
          }
          waiting.add(first);
        }
        incoming.drainTo(waiting);
        dropCancelled();
        StepPlan plan = planner.plan(waiting, running);
        long now = clock.now();
        for (EngineRequest victim : plan.preempted()) {
          victim.trace.preempted("kv_cache_full", now);
          preemptions.incrementAndGet();
        }
        if (!plan.isEmpty()) {
          runStep(plan);
        } else {
          LockSupport.parkNanos(1_000_000L); // nothing fits yet; never spin
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (RuntimeException e) {
        // A bug must not leave clients hanging: fail what is in flight and go on.
        failAll("engine_error", "engine error: " + e);
      }
    }
    failAll("engine_stopped", "the engine stopped");
  }

  private void runStep(StepPlan plan) {
    StepBuilder builder = tracer.newStep();
    for (StepPlan.Chunk c : plan.prefills()) {
      builder.prefill(c.request().trace, c.tokens());
    }
    for (EngineRequest r : plan.decodes()) {
      builder.decode(r.trace);
    }
    long modelled = config.costModel().stepNanos(plan.prefillTokens(), plan.decodes().size());
    // Start time and deadline from one reading: a thread descheduled between two reads would
    // otherwise make the step look shorter than it slept.
    long t0 = System.nanoTime();
    long start = clock.epochNanosAt(t0);
    long deadline = t0 + Math.round(modelled * config.timeScale());
    StepTrace step = builder.start(start);
    SchedulerLimits limits = config.limits();
    step.schedulerState(
        plan.running(),
        plan.waiting(),
        plan.kvBlocksUsed(),
        limits.kvBlocks(),
        limits.maxNumBatchedTokens(),
        limits.maxNumSeqs());
    parkUntil(deadline);
    long end = clock.now();
    step.span().setAttribute(EngineAttributes.MODELLED_STEP_NS, modelled);
    step.span().setAttribute(EngineAttributes.TIME_SCALE, config.timeScale());
    step.end(end);
    gpu.record(step, start, end, modelled);
    steps.incrementAndGet();
    maxBatchSize.accumulateAndGet(step.batchSize(), Math::max);
    maxRunning.accumulateAndGet(plan.running(), Math::max);
    maxKvBlocksUsed.accumulateAndGet(plan.kvBlocksUsed(), Math::max);
    maxStepTokens.accumulateAndGet(plan.scheduledTokens(), Math::max);

    for (StepPlan.Chunk c : plan.prefills()) {
      c.request().kvTokens += c.tokens();
      deliver(c.request(), end);
    }
    for (EngineRequest r : plan.decodes()) {
      r.kvTokens += 1;
      deliver(r, end);
    }
  }

  private void deliver(EngineRequest r, long now) {
    int generated = r.trace.generatedTokens();
    while (r.delivered < generated) {
      int index = r.delivered++;
      boolean last = r.delivered >= r.maxTokens;
      String text = (index == 0 ? "" : " ") + WORDS[index % WORDS.length];
      r.stream.token(index, text, last ? FinishReason.LENGTH.value() : null);
    }
    if (r.delivered >= r.maxTokens) {
      r.trace.finish(FinishReason.LENGTH, now);
      running.remove(r);
      finished.incrementAndGet();
    }
  }

  private void dropCancelled() {
    long now = clock.now();
    for (Iterator<EngineRequest> it = waiting.iterator(); it.hasNext(); ) {
      EngineRequest r = it.next();
      if (r.cancelled) {
        it.remove();
        r.trace.abort("client_disconnected", now);
      }
    }
    for (Iterator<EngineRequest> it = running.iterator(); it.hasNext(); ) {
      EngineRequest r = it.next();
      if (r.cancelled) {
        it.remove();
        r.trace.abort("client_disconnected", now);
      }
    }
  }

  private void failAll(String errorType, String reason) {
    long now = clock.now();
    List<EngineRequest> all = new ArrayList<>(running);
    all.addAll(waiting);
    incoming.drainTo(all);
    running.clear();
    waiting.clear();
    for (EngineRequest r : all) {
      r.trace.abort(errorType, now);
      r.stream.fail(reason);
    }
  }

  // Parks until the deadline: the step's wall time is the modelled time, not sleep granularity.
  private static void parkUntil(long deadline) {
    for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
      LockSupport.parkNanos(left);
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
    }
  }

  @Override
  public void close() {
    stopping = true;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
