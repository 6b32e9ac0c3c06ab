package dev.llmlat.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.llmlat.load.Failure;
import dev.llmlat.load.LoadConfig;
import dev.llmlat.load.LoadResult;
import dev.llmlat.load.LoadRun;
import dev.llmlat.load.PromptSource;
import dev.llmlat.load.ResultFile;
import dev.llmlat.load.SpanShipper;
import dev.llmlat.load.SummaryText;
import dev.llmlat.load.sweep.ComponentShares;
import dev.llmlat.load.sweep.Sweep;
import dev.llmlat.load.sweep.SweepConfig;
import dev.llmlat.load.sweep.SweepPage;
import dev.llmlat.load.sweep.SweepPoint;
import dev.llmlat.load.sweep.SweepResultFile;
import dev.llmlat.load.sweep.SweepSummary;
import dev.llmlat.runtime.process.ExitSequence;
import dev.llmlat.runtime.process.Interrupts;
import dev.llmlat.store.ClickHouseStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code llmlat load --sweep-rate/--sweep-concurrency}: runs the sweep, and after each point
 * commits its client spans, reads its TTFT components from the store where its spans land, prints
 * vLLM's summary of it, and rewrites the result file and the page, so Ctrl-C keeps every point that
 * finished; at the end the sweep's table and knee.
 */
final class LoadSweep implements Sweep.Listener {
  /** How long requests in flight may still finish after Ctrl-C. */
  private static final Duration GRACE = Duration.ofSeconds(5);

  private final SweepConfig config;
  private final LoadCommand.SpanRoute route; // null: --no-spans
  private final ClickHouseStore componentStore; // null: no components
  private final Duration componentsWait;
  private final OutputFile resultFile;
  private final OutputFile htmlFile;
  private final PrintWriter out;
  private final PrintWriter err;
  private final Map<Integer, long[]> spansShipped =
      new ConcurrentHashMap<>(); // point -> {shipped, dropped}
  private volatile boolean stopping;
  private SweepComponents components;
  private LoadCommand.SpanDestination destination;
  private SpanShipper shipper;
  private LoadProgress progress;
  private String shipping; // why spans were not all delivered
  private String notSaved; // why a file was not written
  private boolean internalFailures;

  LoadSweep(
      SweepConfig config,
      LoadCommand.SpanRoute route,
      ClickHouseStore componentStore,
      Duration componentsWait,
      OutputFile resultFile,
      OutputFile htmlFile,
      PrintWriter out,
      PrintWriter err) {
    this.config = config;
    this.route = route;
    this.componentStore = componentStore;
    this.componentsWait = componentsWait;
    this.resultFile = resultFile;
    this.htmlFile = htmlFile;
    this.out = out;
    this.err = err;
  }

  /** Runs the sweep to its end or to Ctrl-C; returns the exit status. */
  int run(PromptSource prompts) throws InterruptedException {
    if (componentStore != null) {
      components = new SweepComponents(componentStore, componentsWait, () -> stopping);
    }
    CountDownLatch reported = new CountDownLatch(1);
    ExitSequence.Step atExit = null;
    SweepSummary summary;
    try {
      Sweep sweep = Sweep.start(config, prompts, this);
      // Ctrl-C: stop the point under way, then wait while this thread sums up and rewrites the
      // files
      atExit =
          ExitSequence.register(
              "stopping the sweep",
              () -> {
                stopping = true;
                sweep.stop(GRACE);
                try {
                  reported.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              GRACE.toMillis() + 75_000);
      try {
        summary = sweep.await();
      } catch (IllegalStateException e) {
        err.println("llmlat load: " + e.getMessage());
        return Llmlat.EXIT_FAILURE;
      }
      return report(summary);
    } finally {
      reported.countDown();
      if (atExit != null) {
        atExit.close();
      }
    }
  }

  private int report(SweepSummary summary) {
    String signal = Interrupts.signal();
    if (!signal.isEmpty()) {
      out.printf(
          "interrupted by %s: the sweep covers the %d points that finished%n",
          signal, summary.points().size());
    }
    summary.print(out);
    write(summary);
    if (!written().isEmpty()) {
      out.println(written());
    }
    out.flush();
    if (notSaved != null) {
      err.println("llmlat load: the sweep's files were not all written: " + notSaved);
    }
    if (shipping != null) {
      err.println("llmlat load: spans were not all delivered: " + shipping);
    }
    if (!signal.isEmpty()) {
      return Interrupts.exitStatus();
    }
    if (internalFailures) {
      err.println(
          "llmlat load: requests failed inside llmlat, not at the server (see the points' failures)");
      return Llmlat.EXIT_FAILURE;
    }
    if (!summary.points().isEmpty()
        && summary.points().stream().allMatch(p -> p.metrics().completed() == 0)) {
      err.println("llmlat load: every request of every point failed");
      return Llmlat.EXIT_FAILURE;
    }
    boolean dropped = spansShipped.values().stream().anyMatch(s -> s[1] > 0);
    return shipping != null || notSaved != null || dropped ? Llmlat.EXIT_FAILURE : 0;
  }

  @Override
  public SpanShipper spans(int index, LoadConfig point) {
    if (route == null) {
      return null;
    }
    destination = route.next().get();
    shipper = new SpanShipper(destination.sink());
    return shipper;
  }

  @Override
  public LoadRun.Listener progress(int index, LoadConfig point) {
    String label = config.label(config.levels().get(index));
    out.printf("point %d of %d: %s, %s%n", index + 1, config.levels().size(), label, point.shape());
    out.flush();
    progress = LoadProgress.start(point, err, "load " + label);
    return progress;
  }

  @Override
  public ComponentShares ended(int index, LoadResult result) {
    progress.close();
    if (shipper != null) {
      shipper.close(30_000);
      try {
        destination.finish().run(); // the point's spans are durable before its components are read
      } catch (RuntimeException e) {
        shipping = e.getMessage();
      }
      if (shipper.failure() != null) {
        shipping = shipper.failure().getMessage();
      }
      destination.close();
      spansShipped.put(index, new long[] {shipper.shipped(), shipper.dropped()});
    }
    if (!result.failures(Failure.Kind.INTERNAL).isEmpty()) {
      internalFailures = true;
    }
    if (components == null || result.stopped() || stopping) {
      return null;
    }
    try {
      ComponentShares shares = components.of(result);
      if (!components.note().isEmpty()) {
        out.println(
            "TTFT components at "
                + config.label(config.levels().get(index))
                + ": "
                + components.note());
      }
      if (components.nothingLanded()) {
        out.println(
            "TTFT components: not read for the later points (is the ingester running? does the engine send its spans?)");
        components = null;
      }
      return shares;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } catch (RuntimeException e) {
      out.println(
          "TTFT components: the store failed ("
              + e.getMessage()
              + "); not read for the later points");
      components = null;
      return null;
    }
  }

  @Override
  public void finished(SweepPoint point, SweepSummary summary) {
    SummaryText.print(point.result(), point.metrics(), out);
    long[] spans = spansShipped.get(point.index());
    if (spans != null) {
      out.printf(
          "Spans: %,d client spans to %s%s%n",
          spans[0],
          route.description(),
          spans[1] > 0 ? String.format(Locale.ROOT, "; %,d not shipped", spans[1]) : "");
    }
    if (point.shares() != null) {
      out.println(point.shares().sentence(config.label(point.level())));
    }
    write(summary);
    out.flush();
  }

  /**
   * Rewrites the result file and the page with the points so far; a failure is kept for the end.
   */
  private void write(SweepSummary summary) {
    if (resultFile != null) {
      ObjectNode json =
          SweepResultFile.of(
              summary,
              (p, r) -> {
                long[] spans = spansShipped.get(p.index());
                if (spans != null) {
                  r.putObject("llmlat_spans")
                      .put("destination", route.description())
                      .put("shipped", spans[0])
                      .put("dropped", spans[1]);
                }
              });
      try {
        resultFile.write(o -> ResultFile.write(json, o));
      } catch (IOException | IllegalArgumentException e) {
        notSaved = e.getMessage();
      }
    }
    if (htmlFile != null) {
      byte[] page = SweepPage.html(summary).getBytes(StandardCharsets.UTF_8);
      try {
        htmlFile.write(o -> o.write(page));
      } catch (IOException | IllegalArgumentException e) {
        notSaved = e.getMessage();
      }
    }
  }

  /** What the end of the output says was written. */
  private String written() {
    StringBuilder s = new StringBuilder();
    if (resultFile != null && notSaved == null) {
      s.append("wrote ").append(resultFile.path());
    }
    if (htmlFile != null && notSaved == null) {
      s.append(s.isEmpty() ? "wrote " : " and ").append(htmlFile.path());
    }
    return s.toString();
  }
}
