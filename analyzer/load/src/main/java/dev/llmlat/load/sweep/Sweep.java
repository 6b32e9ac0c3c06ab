package dev.llmlat.load.sweep;

import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.LoadResult;
import dev.llmlat.load.LoadRun;
import dev.llmlat.load.PromptSource;
import dev.llmlat.load.SpanShipper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs a sweep: one {@link LoadRun} per level, in rising order, one after the other on a thread of
 * its own, the prompts continuing from point to point. After each point the caller makes the
 * point's spans durable and may name its TTFT components ({@link Listener#ended}), then hears the
 * summary of the points so far ({@link Listener#finished}, where it rewrites its files).
 *
 * <p>{@link #stop} (Ctrl-C) stops the point under way as {@link LoadRun#stop} does and runs no
 * more; that point is left out (it did not run its duration), the finished ones are kept.
 */
public final class Sweep {
  /**
   * What the sweep asks of its caller at each point, and tells it; called on the sweep's thread.
   */
  public interface Listener {
    Listener NONE = new Listener() {};

    /**
     * Point {@code index} is about to run {@code config}: where its client spans go (null:
     * nowhere).
     */
    default SpanShipper spans(int index, LoadConfig config) {
      return null;
    }

    /** Told of the point's progress; {@link LoadRun.Listener#NONE} when nobody listens. */
    default LoadRun.Listener progress(int index, LoadConfig config) {
      return LoadRun.Listener.NONE;
    }

    /**
     * The point's requests ended (or it was stopped: {@code result.stopped()}): make its spans
     * durable and return its TTFT components, or null when they are not known.
     */
    default ComponentShares ended(int index, LoadResult result) {
      return null;
    }

    /** A point finished: {@code summary} covers it and the ones before. */
    default void finished(SweepPoint point, SweepSummary summary) {}
  }

  private final SweepConfig config;
  private final PromptSource prompts;
  private final Listener listener;
  private final List<SweepPoint> points = new ArrayList<>();
  private final CountDownLatch done = new CountDownLatch(1);
  private final Thread thread;
  private volatile LoadRun current;
  private volatile boolean stopping;
  private volatile RuntimeException failure;

  private Sweep(SweepConfig config, PromptSource prompts, Listener listener) {
    this.config = config;
    this.prompts = prompts;
    this.listener = listener;
    this.thread = new Thread(this::run, "llmlat-sweep");
    thread.setDaemon(true);
  }

  public static Sweep start(SweepConfig config, PromptSource prompts, Listener listener) {
    Sweep sweep =
        new Sweep(
            Objects.requireNonNull(config, "config"),
            Objects.requireNonNull(prompts, "prompts"),
            Objects.requireNonNull(listener, "listener"));
    sweep.thread.start();
    return sweep;
  }

  private void run() {
    try {
      for (int i = 0; i < config.levels().size() && !stopping; i++) {
        LoadConfig point = config.point(i);
        LoadRun run;
        synchronized (this) {
          if (stopping) {
            break;
          }
          run =
              LoadRun.start(point, prompts, listener.spans(i, point), listener.progress(i, point));
          current = run;
        }
        LoadResult result = run.await();
        ComponentShares shares = listener.ended(i, result);
        if (result.stopped() || result.warmupFailed()) {
          if (result.warmupFailed()) {
            failure =
                new IllegalStateException(
                    "all "
                        + result.warmups()
                        + " warm-up requests failed (first: "
                        + result.warmupFailure()
                        + "); nothing was measured");
          }
          break;
        }
        SweepPoint p = SweepPoint.of(i, config.levels().get(i), result, shares);
        SweepSummary summary;
        synchronized (points) {
          points.add(p);
          summary = SweepSummary.of(config, points, false);
        }
        listener.finished(p, summary);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      failure = e;
    } finally {
      done.countDown();
    }
  }

  /**
   * Stops the point under way (its requests in flight get {@code grace}) and runs no more; returns
   * when the sweep has ended or after {@code grace} plus 10 s.
   */
  public void stop(Duration grace) {
    LoadRun run;
    synchronized (this) {
      stopping = true;
      run = current;
    }
    if (run != null) {
      run.stop(grace);
    }
    try {
      done.await(grace.toMillis() + 10_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Waits for the sweep to end; returns the summary of the points that finished.
   *
   * @throws IllegalStateException when it could not go on: every warm-up request failed, or a
   *     listener failed
   */
  public SweepSummary await() throws InterruptedException {
    done.await();
    if (failure != null) {
      throw failure instanceof IllegalStateException ise
          ? ise
          : new IllegalStateException(failure.getMessage(), failure);
    }
    synchronized (points) {
      return SweepSummary.of(config, points, stopping || points.size() < config.levels().size());
    }
  }
}
