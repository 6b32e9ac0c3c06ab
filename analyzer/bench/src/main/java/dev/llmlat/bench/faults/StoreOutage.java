package dev.llmlat.bench.faults;

import dev.llmlat.semconv.LlmlatTopics;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The store process SIGKILLed while spans flow and kept away for the outage, then restarted on the
 * same port. The ingester must hold its one batch, retry it with backoff and consume nothing more
 * meanwhile (its resident memory and pending spans stay flat while the backlog grows in Kafka),
 * then resume with nothing lost.
 */
final class StoreOutage {
  static final String NAME = "store-outage";

  private final long spans;
  private final Duration outage;
  private final long seed;

  StoreOutage(long spans, Duration outage, long seed) {
    this.spans = spans;
    this.outage = outage;
    this.seed = seed;
  }

  FaultResult run(FaultRig rig, PrintWriter log) throws IOException, InterruptedException {
    List<String> problems = new ArrayList<>();
    // the stream runs through the outage: half of it before, the rest while the store is away
    double rate = spans / (2.0 + outage.toMillis() / 1000.0 * 1.5);
    try (SpanStream stream = new SpanStream(rig.bootstrap(), spans, seed, rate)) {
      long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      while (rig.count("otel_traces") == 0) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "nothing reached the store within 2 minutes; see " + rig.ingesterLog());
        }
        Thread.sleep(100);
      }
      long rssBefore = rssKb(rig.ingester().pid());
      rig.killStore();
      log.printf("  %s: store killed; down for %d s%n", NAME, outage.toSeconds());
      log.flush();
      long downAt = System.nanoTime();
      long rssMax = rssBefore;
      long backlogMax = 0;
      while (System.nanoTime() - downAt < outage.toNanos()) {
        rssMax = Math.max(rssMax, rssKb(rig.ingester().pid()));
        backlogMax = Math.max(backlogMax, rig.uncommitted(LlmlatTopics.SPANS));
        if (!rig.ingester().isAlive()) {
          problems.add("the ingester died while the store was down");
          break;
        }
        Thread.sleep(
            Math.min(
                1000, Math.max(1, (outage.toNanos() - (System.nanoTime() - downAt)) / 1_000_000)));
      }
      long[] holding = rig.lastHolding();
      long retries = rig.countLogLines("retrying in");
      rig.startStore();
      long upAt = System.nanoTime();
      long sent = stream.await();
      rig.awaitDrained(Duration.ofMinutes(3));
      double recovery = (System.nanoTime() - upAt) / 1e9;
      rig.stopIngester();
      if (retries == 0) {
        problems.add("the ingester logged no insert retries: it did not notice the outage");
      }
      if (holding != null && holding[0] > 50_000) {
        problems.add("the ingester held " + holding[0] + " spans, more than one batch (50,000)");
      }
      Map<String, String> figures = new LinkedHashMap<>();
      figures.put("outage_s", Long.toString(outage.toSeconds()));
      figures.put("insert_retries", Long.toString(retries));
      figures.put("backlog_max_records", Long.toString(backlogMax));
      figures.put("ingester_pending_spans", holding == null ? "?" : Long.toString(holding[0]));
      figures.put("ingester_heap_mb", holding == null ? "?" : Long.toString(holding[1]));
      figures.put("ingester_rss_mb", String.format("%d->%d", rssBefore >> 10, rssMax >> 10));
      figures.put("recovered_in_s", String.format("%.1f", recovery));
      return rig.storedSpans()
          .result(NAME, sent, rig.readAll(LlmlatTopics.DEAD_LETTERS).size(), figures, problems);
    }
  }

  /** Resident set of a process (Linux /proc), in KiB; 0 where unknown. */
  static long rssKb(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
      }
    } catch (IOException | NumberFormatException e) {
      // not Linux, or the process is gone
    }
    return 0;
  }
}
