package dev.llmlat.bench.faults;

import dev.llmlat.semconv.LlmlatTopics;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The ingester SIGKILLed at random points while a stream of spans flows, restarted each time;
 * afterwards every span must be in the store exactly once (intent commits + insert deduplication).
 */
final class IngesterKills {
  static final String NAME = "ingester-kill";

  private final long spans;
  private final int kills;
  private final long seed;

  IngesterKills(long spans, int kills, long seed) {
    this.spans = spans;
    this.kills = kills;
    this.seed = seed;
  }

  FaultResult run(FaultRig rig, PrintWriter log) throws IOException, InterruptedException {
    Random random = new Random(seed);
    // kill points: fractions of the stream already stored, spread at random over it
    double[] points = new double[kills];
    for (int i = 0; i < kills; i++) {
      points[i] = 0.05 + 0.9 * random.nextDouble();
    }
    Arrays.sort(points);
    List<Long> killedAt = new ArrayList<>();
    long t0 = System.nanoTime();
    try (SpanStream stream = new SpanStream(rig.bootstrap(), spans, seed, 0)) {
      for (double point : points) {
        long target = (long) (point * spans);
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        long stored;
        while ((stored = rig.count("otel_traces")) < target) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException(
                "the store reached only " + stored + " of " + target + " spans in 5 minutes");
          }
          Thread.sleep(50);
        }
        Thread.sleep(
            random.nextInt(400)); // land anywhere in the batch cycle: poll, intent, insert, commit
        rig.killIngester();
        killedAt.add(rig.count("otel_traces"));
        log.printf(
            "  %s: SIGKILL %d/%d with %,d spans stored%n",
            NAME, killedAt.size(), kills, killedAt.getLast());
        log.flush();
        rig.startIngester();
      }
      long sent = stream.await();
      rig.awaitDrained(Duration.ofSeconds(Math.max(120, spans / 2000)));
      double seconds = (System.nanoTime() - t0) / 1e9;
      rig.stopIngester();
      Map<String, String> figures = new LinkedHashMap<>();
      figures.put("kills", Integer.toString(kills));
      figures.put("replayed_batches", Long.toString(rig.countLogLines("replaying offsets")));
      figures.put("seconds", String.format("%.1f", seconds));
      figures.put("seed", Long.toString(seed));
      return rig.storedSpans()
          .result(NAME, sent, rig.readAll(LlmlatTopics.DEAD_LETTERS).size(), figures, List.of());
    }
  }
}
