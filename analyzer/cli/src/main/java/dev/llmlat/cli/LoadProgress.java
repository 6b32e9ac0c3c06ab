package dev.llmlat.cli;

import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.LoadRun;
import dev.llmlat.load.RequestOutcome;
import java.io.PrintWriter;
import java.util.Locale;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * What {@code llmlat load} shows while it runs, on stderr: a progress bar on a terminal (requests
 * done of those planned, failures and requests in flight beside it), else one line every {@value
 * #LINE_EVERY_S} s, so a log file is not flooded.
 */
final class LoadProgress implements LoadRun.Listener, AutoCloseable {
  private static final int LINE_EVERY_S = 10;

  private final ProgressBar bar; // null: not a terminal
  private final PrintWriter err;
  private final String name;
  private long lastLine = System.nanoTime();
  private boolean closed;

  private LoadProgress(ProgressBar bar, PrintWriter err, String name) {
    this.bar = bar;
    this.err = err;
    this.name = name;
  }

  static LoadProgress start(LoadConfig config, PrintWriter err) {
    return start(config, err, "load");
  }

  /** Progress of a run called {@code name} (a sweep's point: {@code load 8 req/s}). */
  static LoadProgress start(LoadConfig config, PrintWriter err, String name) {
    java.io.Console console = System.console();
    if (console == null || !console.isTerminal()) {
      return new LoadProgress(null, err, name);
    }
    ProgressBar bar =
        new ProgressBarBuilder()
            .setTaskName(name)
            .setStyle(ProgressBarStyle.ASCII)
            .setInitialMax(config.duration() == null ? config.requests() : -1) // -1: open-ended
            .setConsumer(new ConsoleProgressBarConsumer(System.err))
            .setUpdateIntervalMillis(500)
            .build();
    return new LoadProgress(bar, err, name);
  }

  @Override
  public void warmupDone(int requests, int failures) {
    String line =
        String.format(
            Locale.ROOT,
            "warm-up: %d requests done%s",
            requests,
            failures > 0 ? " (" + failures + " failed)" : "");
    if (bar != null) {
      bar.setExtraMessage(line);
    } else {
      synchronized (this) {
        err.println(name + " " + line);
        err.flush();
      }
    }
  }

  @Override
  public synchronized void requestDone(RequestOutcome outcome, LoadRun.Progress p) {
    if (closed) {
      return;
    }
    String extra = String.format(Locale.ROOT, "%d failed, %d in flight", p.failed(), p.inFlight());
    if (bar != null) {
      bar.stepTo(p.done());
      bar.setExtraMessage(extra);
      return;
    }
    long now = System.nanoTime();
    if (now - lastLine >= LINE_EVERY_S * 1_000_000_000L) {
      lastLine = now;
      err.printf(
          Locale.ROOT,
          "%s: %d done%s, %s, %.0f s%n",
          name,
          p.done(),
          p.planned() > 0 ? " of " + p.planned() : "",
          extra,
          p.elapsedNanos() / 1e9);
      err.flush();
    }
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      if (bar != null) {
        bar.close();
      }
    }
  }
}
