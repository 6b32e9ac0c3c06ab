package dev.llmlat.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One load run: warm-up requests (closed loop, not measured, sent with an unsampled {@code
 * traceparent} so no layer records them), then the measured phase, open loop at a rate or a closed
 * loop of clients. One dispatcher thread sends on schedule; each request runs on a virtual thread
 * of its own. At most {@code maxConcurrency} are in flight: a request that is due while all slots
 * are taken waits for one (its wait is the client queue time, as in vLLM), so a server that falls
 * behind slows the run down instead of piling up requests without bound.
 *
 * <p>{@link #stop} (Ctrl-C) stops sending, gives the requests in flight a grace period to end, and
 * cancels the rest; {@link #await} then returns what finished.
 */
public final class LoadRun {
  /** Told of progress, from the requests' threads. */
  public interface Listener {
    /** Hears nothing: for callers that only want the result. */
    Listener NONE = new Listener() {};

    default void warmupDone(int requests, int failures) {}

    default void requestDone(RequestOutcome outcome, Progress progress) {}
  }

  /**
   * Where the measured phase is.
   *
   * @param done requests that ended
   * @param failed of which failed
   * @param inFlight requests under way
   * @param planned the requests the run sends; -1: as many as its duration allows
   * @param elapsedNanos since the phase began
   */
  public record Progress(int done, int failed, int inFlight, int planned, long elapsedNanos) {}

  private static final HexFormat HEX = HexFormat.of();

  private final LoadConfig config;
  private final PromptSource prompts;
  private final SpanShipper spans;
  private final Listener listener;
  private final StreamingClient client;
  private final WallClock clock = new WallClock();
  private final ClientSpans clientSpans;
  private final Semaphore slots;
  private final Map<Integer, StreamingClient.InFlight> inFlight = new ConcurrentHashMap<>();
  private final List<RequestOutcome> outcomes = new ArrayList<>();
  private final AtomicInteger launched = new AtomicInteger();
  private final AtomicInteger warmupFailures = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();
  private final CountDownLatch finished = new CountDownLatch(1);
  private final Thread dispatcher;
  private volatile Failure warmupFailure;
  private volatile boolean stopping;
  private volatile long graceNanos;
  private volatile long phaseStart;
  private volatile boolean measuring;
  private int warmupsSent;

  private LoadRun(LoadConfig config, PromptSource prompts, SpanShipper spans, Listener listener) {
    this.config = config;
    this.prompts = prompts;
    this.spans = spans;
    this.listener = listener;
    this.client = new StreamingClient(config);
    this.clientSpans = new ClientSpans(config, clock);
    this.slots = new Semaphore(config.maxConcurrency());
    if (spans != null) {
      spans.resource(clientSpans.resource());
    }
    this.dispatcher = new Thread(this::dispatch, "llmlat-load-dispatch");
    dispatcher.setDaemon(true);
  }

  /**
   * Starts a run.
   *
   * @param spans where the client spans go; null: none
   * @param listener told of progress; {@link Listener#NONE} when nobody listens
   */
  public static LoadRun start(
      LoadConfig config, PromptSource prompts, SpanShipper spans, Listener listener) {
    LoadRun run = new LoadRun(config, prompts, spans, Objects.requireNonNull(listener, "listener"));
    run.dispatcher.start();
    return run;
  }

  private void dispatch() {
    try {
      warmup();
      if (!stopping && (config.warmup() == 0 || warmupFailures.get() < config.warmup())) {
        measure();
      }
    } catch (InterruptedException e) {
      // stop(): what is in flight drains below
    } finally {
      drain();
      client.close();
      finished.countDown();
    }
  }

  private void warmup() throws InterruptedException {
    for (int i = 0; i < config.warmup() && !stopping; i++) {
      slots.acquire();
      launch(-1, prompts.next(), System.nanoTime(), false);
      warmupsSent++;
    }
    drain();
    if (config.warmup() > 0) {
      listener.warmupDone(warmupsSent, warmupFailures.get());
    }
  }

  private void measure() throws InterruptedException {
    ArrivalTimes schedule =
        config.shape() instanceof LoadShape.Closed ? null : ArrivalTimes.of(config.shape());
    long limit = config.duration() == null ? Long.MAX_VALUE : config.duration().toNanos();
    phaseStart = System.nanoTime();
    measuring = true;
    for (int i = 0; !stopping && (config.requests() == 0 || i < config.requests()); i++) {
      long due;
      if (schedule != null) {
        long offset = schedule.next();
        if (offset >= limit) {
          break;
        }
        due = phaseStart + offset;
        sleepUntil(due);
      } else {
        due = -1;
      }
      slots.acquire();
      long now = System.nanoTime();
      // open loop: a request due within the duration goes even when a slot freed late (vLLM's rule)
      if (stopping || (schedule == null && now - phaseStart >= limit)) {
        slots.release();
        break;
      }
      launch(i, prompts.next(), due < 0 ? now : due, true);
    }
  }

  private void sleepUntil(long due) throws InterruptedException {
    long wait;
    while ((wait = due - System.nanoTime()) > 0) {
      LockSupport.parkNanos(wait);
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }

  private void launch(int index, Prompt prompt, long due, boolean measured) {
    int id = launched.getAndIncrement();
    String traceId = randomTraceId();
    String spanId = randomSpanId();
    StreamingClient.Call call =
        new StreamingClient.Call(index, prompt, traceId, spanId, measured, due);
    Thread thread =
        Thread.ofVirtual()
            .name("llmlat-load-" + id)
            .unstarted(
                () -> {
                  try {
                    RequestOutcome outcome = client.execute(call, inFlight.get(id));
                    if (measured) {
                      record(outcome);
                    } else if (!outcome.success()) {
                      warmupFailures.incrementAndGet();
                      if (warmupFailure == null) {
                        warmupFailure = outcome.failure();
                      }
                    }
                  } finally {
                    inFlight.remove(id);
                    slots.release();
                  }
                });
    inFlight.put(id, new StreamingClient.InFlight(thread));
    thread.start();
  }

  private void record(RequestOutcome outcome) {
    int done;
    synchronized (outcomes) {
      outcomes.add(outcome);
      done = outcomes.size();
    }
    if (!outcome.success()) {
      failed.incrementAndGet();
    }
    if (spans != null) {
      spans.add(clientSpans.span(outcome));
    }
    int planned = config.duration() == null ? config.requests() : -1;
    listener.requestDone(
        outcome,
        new Progress(
            done, failed.get(), inFlight.size() - 1, planned, System.nanoTime() - phaseStart));
  }

  /**
   * Waits for every request in flight; once stopping, for the grace period only, then cancels them.
   */
  private void drain() {
    int all = config.maxConcurrency();
    while (true) {
      try {
        if (!stopping) {
          slots.acquire(all);
        } else if (!slots.tryAcquire(all, graceNanos, TimeUnit.NANOSECONDS)) {
          inFlight.values().forEach(StreamingClient.InFlight::cancel);
          slots.acquireUninterruptibly(all);
        }
        slots.release(all);
        return;
      } catch (InterruptedException e) {
        // stop() arrived: drain again, now within the grace period
      }
    }
  }

  /**
   * Stops sending; requests in flight get {@code grace} to end, then are cancelled. Returns when
   * the run has ended or after {@code grace} plus 10 s.
   */
  public void stop(Duration grace) {
    graceNanos = grace.toNanos();
    stopping = true;
    dispatcher.interrupt();
    try {
      finished.await(grace.toMillis() + 10_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits for the run to end; returns what it measured. */
  public LoadResult await() throws InterruptedException {
    finished.await();
    List<RequestOutcome> sorted;
    synchronized (outcomes) {
      sorted = new ArrayList<>(outcomes);
    }
    sorted.sort(Comparator.comparingInt(RequestOutcome::index));
    // to the end of the last request that finished (ones cancelled at a stop did not)
    long lastEnd =
        sorted.stream()
            .filter(r -> !r.cancelled())
            .mapToLong(RequestOutcome::endNanos)
            .max()
            .orElse(phaseStart);
    long duration = measuring ? Math.max(0, lastEnd - phaseStart) : 0;
    return new LoadResult(
        config,
        prompts.description(),
        sorted,
        phaseStart,
        duration,
        stopping,
        warmupsSent,
        warmupFailures.get(),
        warmupFailure,
        clock);
  }

  /** A random trace id in hex, never all zeros (W3C trace context forbids it). */
  private static String randomTraceId() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long high;
    long low;
    do {
      high = random.nextLong();
      low = random.nextLong();
    } while (high == 0 && low == 0);
    return HEX.toHexDigits(high) + HEX.toHexDigits(low);
  }

  /** A random span id in hex, never zero. */
  private static String randomSpanId() {
    long id;
    do {
      id = ThreadLocalRandom.current().nextLong();
    } while (id == 0);
    return HEX.toHexDigits(id);
  }
}
