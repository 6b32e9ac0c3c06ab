package dev.llmlat.bench;

import dev.llmlat.runtime.home.LlmlatHome;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.services.ChildJvm;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.services.LocalServices;
import dev.llmlat.services.PidFile;
import dev.llmlat.stats.Quantiles;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.ClickHouseStores;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Sustained ingest at a target rate with every service on this machine, as `llmlat services up`
 * runs them in a scratch home (broker, store process, ingester process): samples achieved spans/s,
 * end-to-end lag (a marker span's end → the moment a query finds it in the store) and the
 * ingester's live heap, prints them over time and a summary with the memory verdict.
 */
public final class SoakBenchmark {
  private static final Duration LAG_POLL = Duration.ofMillis(200);
  private static final Duration WARM_UP = Duration.ofSeconds(30);
  private static final Pattern OWNS_PARTITIONS = Pattern.compile("owns partitions: \\[\\d");
  private static final Duration DRAIN = Duration.ofMinutes(2);

  /**
   * What to run, validated once.
   *
   * @param duration how long spans are produced
   * @param spansPerSecond the target rate
   * @param sampleEvery how often a row is printed (and the ingester's heap measured)
   * @param partitions partitions of {@code otlp_spans}
   * @param scratch the scratch llmlat home, removed afterwards
   */
  public record Config(
      Duration duration, int spansPerSecond, Duration sampleEvery, int partitions, Path scratch) {
    public Config {
      if (duration.toSeconds() < 10 || duration.toHours() > 24) {
        throw new IllegalArgumentException(
            "--minutes must give 10 s to 24 h, got " + duration.toSeconds() + " s");
      }
      if (spansPerSecond < 100 || spansPerSecond > 1_000_000) {
        throw new IllegalArgumentException(
            "--rate must be 100..1000000 spans/s, got " + spansPerSecond);
      }
      if (sampleEvery.toSeconds() < 1 || sampleEvery.compareTo(duration) > 0) {
        throw new IllegalArgumentException(
            "--sample-seconds must be at least 1 and at most the run, got "
                + sampleEvery.toSeconds());
      }
      if (partitions < 1 || partitions > 100) {
        throw new IllegalArgumentException("--partitions must be 1..100, got " + partitions);
      }
      if (duration.minus(warmUp(duration)).dividedBy(sampleEvery) < 2) {
        throw new IllegalArgumentException(
            "--sample-seconds "
                + sampleEvery.toSeconds()
                + " is too long for a run of "
                + duration.toSeconds()
                + " s: the heap trend needs at least 2 samples after the warm-up");
      }
    }

    /**
     * JIT compilation and the first batches settle in the first quarter (at most 30 s): the summary
     * leaves it out.
     */
    public Duration warmUp() {
      return warmUp(duration);
    }

    private static Duration warmUp(Duration duration) {
      return duration.dividedBy(4).compareTo(WARM_UP) < 0 ? duration.dividedBy(4) : WARM_UP;
    }
  }

  /** One row of the table: the figures of one sampling interval. */
  public record Sample(
      double atSeconds,
      double producedPerSecond,
      double storedPerSecond,
      double lagP50Ms,
      double lagP99Ms,
      int markers,
      double liveHeapMb) {}

  /** The summary. {@code trend} covers the samples after warm-up. */
  public record Result(
      List<Sample> samples,
      Duration warmUp,
      long sent,
      long stored,
      long distinct,
      double achievedSpansPerSecond,
      double lagP50Ms,
      double lagP99Ms,
      double lagMaxMs,
      double heapFirstMb,
      double heapLastMb,
      double heapMaxMb,
      HeapTrend trend) {
    public boolean lostOrDuplicated() {
      return stored != sent || distinct != sent;
    }
  }

  private final Config config;

  public SoakBenchmark(Config config) {
    this.config = config;
  }

  public Result run(PrintWriter out) throws IOException, InterruptedException {
    LocalServices services =
        new LocalServices(new LlmlatHome(config.scratch()), dev.llmlat.cli.Llmlat.class.getName());
    try {
      out.printf("starting broker, store and ingester under %s ...%n", config.scratch());
      out.flush();
      services.up(
          new LocalServices.Options(
              KafkaBroker.freePort(),
              KafkaBroker.freePort(),
              KafkaBroker.freePort(),
              config.partitions(),
              null,
              dev.llmlat.otlpkafka.KafkaClientProperties.none(),
              false)); // the ingester alone
      String bootstrap = services.kafkaBootstrap().orElseThrow();
      long ingesterPid = PidFile.read(services.pidFile(LocalServices.INGEST)).orElseThrow().pid();
      awaitIngesterReady(services);
      try (ClickHouseStore store = ClickHouseStores.open(services.storeConfig().orElseThrow());
          JvmHeapProbe heap = new JvmHeapProbe(ingesterPid)) {
        return soak(out, store, heap, bootstrap, services);
      }
    } finally {
      services.down();
      ChildJvm.deleteRecursively(config.scratch());
    }
  }

  private Result soak(
      PrintWriter out,
      ClickHouseStore store,
      JvmHeapProbe heap,
      String bootstrap,
      LocalServices services)
      throws InterruptedException {
    out.printf(
        "target %,d spans/s for %d s into %s (%d partitions); a row every %d s; heap = ingester's live heap after a"
            + " full GC%n",
        config.spansPerSecond(),
        config.duration().toSeconds(),
        LlmlatTopics.SPANS,
        config.partitions(),
        config.sampleEvery().toSeconds());
    out.printf(
        "%8s %12s %12s %10s %10s %8s %10s%n",
        "t (s)", "produced/s", "stored/s", "lag p50", "lag p99", "markers", "heap MB");
    out.flush();
    List<Sample> samples = new ArrayList<>();
    List<Double> allLags = new ArrayList<>();
    long startNanos = System.nanoTime();
    long endNanos = startNanos + config.duration().toNanos();
    Duration warmUp = config.warmUp();
    long storedBefore = storedSpans(store);
    long sent;
    MarkerLag lag;
    try (SteadySpanProducer producer =
        new SteadySpanProducer(bootstrap, LlmlatTopics.SPANS, config.spansPerSecond())) {
      lag = new MarkerLag(store, producer);
      long sampleStart = startNanos;
      long sentAtSample = 0;
      long storedAtSample = storedBefore;
      List<Double> windowLags = new ArrayList<>();
      while (System.nanoTime() < endNanos) {
        Thread.sleep(LAG_POLL.toMillis());
        if (producer.failure() != null) {
          throw new IllegalStateException(
              "producing spans failed: " + producer.failure().getMessage(), producer.failure());
        }
        checkIngester(services);
        windowLags.addAll(lag.poll());
        long now = System.nanoTime();
        if (now - sampleStart >= config.sampleEvery().toNanos()) {
          double seconds = (now - sampleStart) / 1e9;
          long sentNow = producer.sent();
          long storedNow = storedSpans(store);
          double[] sorted = windowLags.stream().mapToDouble(Double::doubleValue).sorted().toArray();
          Sample s =
              new Sample(
                  (now - startNanos) / 1e9,
                  (sentNow - sentAtSample) / seconds,
                  (storedNow - storedAtSample) / seconds,
                  Quantiles.ofSorted(sorted, 0.5),
                  Quantiles.ofSorted(sorted, 0.99),
                  sorted.length,
                  heap.liveHeapBytes() / 1048576.0);
          samples.add(s);
          out.printf(
              "%8.0f %,12.0f %,12.0f %10s %10s %8d %10.1f%n",
              s.atSeconds(),
              s.producedPerSecond(),
              s.storedPerSecond(),
              ms(s.lagP50Ms()),
              ms(s.lagP99Ms()),
              s.markers(),
              s.liveHeapMb());
          out.flush();
          if ((sampleStart - startNanos) / 1e9
              >= warmUp.toSeconds()) { // the whole window after warm-up
            allLags.addAll(windowLags);
          }
          windowLags.clear();
          sampleStart = now;
          sentAtSample = sentNow;
          storedAtSample = storedNow;
        }
      }
      producer.close();
      sent = producer.sent();
    }
    double producedSeconds = (System.nanoTime() - startNanos) / 1e9;
    long storedAtEnd = storedSpans(store) - storedBefore;
    double achieved = storedAtEnd / producedSeconds;
    // whatever is still in flight: everything sent must arrive, exactly once
    long deadline = System.nanoTime() + DRAIN.toNanos();
    long stored = storedAtEnd;
    while (stored < sent && System.nanoTime() < deadline) {
      Thread.sleep(500);
      checkIngester(services);
      stored = storedSpans(store) - storedBefore;
    }
    Thread.sleep(1000); // a late duplicate would show now
    stored = storedSpans(store) - storedBefore;
    long distinct =
        Long.parseLong(store.query("SELECT uniqExact(TraceId, SpanId) FROM otel_traces").single());
    allLags.addAll(lag.poll()); // markers that arrived while draining

    double[] lags = allLags.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    List<HeapTrend.Point> points =
        samples.stream()
            .filter(s -> s.atSeconds() >= warmUp.toSeconds())
            .map(s -> new HeapTrend.Point(s.atSeconds() / 60, s.liveHeapMb()))
            .toList();
    HeapTrend trend = HeapTrend.of(points);
    double[] heapMb = samples.stream().mapToDouble(Sample::liveHeapMb).toArray();
    Result result =
        new Result(
            samples,
            warmUp,
            sent,
            stored,
            distinct,
            achieved,
            Quantiles.ofSorted(lags, 0.5),
            Quantiles.ofSorted(lags, 0.99),
            lags.length == 0 ? Double.NaN : lags[lags.length - 1],
            heapMb[0],
            heapMb[heapMb.length - 1],
            Arrays.stream(heapMb).max().orElse(0),
            trend);
    print(out, result);
    return result;
  }

  private void print(PrintWriter out, Result r) {
    out.printf(
        "%nachieved: %,.0f spans/s stored while producing (target %,d: %.0f%%); %,d spans sent, %,d stored, %,d distinct%s%n",
        r.achievedSpansPerSecond(),
        config.spansPerSecond(),
        100 * r.achievedSpansPerSecond() / config.spansPerSecond(),
        r.sent(),
        r.stored(),
        r.distinct(),
        r.lostOrDuplicated() ? " -- LOST OR DUPLICATED SPANS" : "");
    out.printf(
        "end-to-end lag after %d s warm-up (marker span end -> queryable, polled every %d ms): p50 %.0f ms, p99 %.0f ms,"
            + " max %.0f ms%n",
        r.warmUp().toSeconds(), LAG_POLL.toMillis(), r.lagP50Ms(), r.lagP99Ms(), r.lagMaxMs());
    out.printf(
        "ingester live heap: first %.1f MB, last %.1f MB, max %.1f MB; after %d s warm-up: slope %+.2f MB/min,"
            + " fitted rise %+.1f MB (allowed %.1f MB): %s%n",
        r.heapFirstMb(),
        r.heapLastMb(),
        r.heapMaxMb(),
        r.warmUp().toSeconds(),
        r.trend().slopeMbPerMinute(),
        r.trend().riseMb(),
        r.trend().allowedMb(),
        r.trend().flat() ? "flat" : "GREW");
    out.printf("rule: %s%n", HeapTrend.RULE);
    out.flush();
  }

  /** Production starts once the ingester owns partitions, so its start-up is not counted as lag. */
  private static void awaitIngesterReady(LocalServices services)
      throws IOException, InterruptedException {
    Path log = services.log(LocalServices.INGEST);
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!(Files.exists(log) && OWNS_PARTITIONS.matcher(Files.readString(log)).find())) {
      checkIngester(services);
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the ingester did not join its group within 60 s; see " + log + ChildJvm.tail(log, 10));
      }
      Thread.sleep(200);
    }
  }

  private static void checkIngester(LocalServices services) {
    if (PidFile.read(services.pidFile(LocalServices.INGEST)).flatMap(PidFile::process).isEmpty()) {
      throw new IllegalStateException(
          "the ingester died; see "
              + services.log(LocalServices.INGEST)
              + ChildJvm.tail(services.log(LocalServices.INGEST), 10));
    }
  }

  private static long storedSpans(ClickHouseStore store) {
    return Long.parseLong(store.query("SELECT count() FROM otel_traces").single());
  }

  private static String ms(double value) {
    return Double.isNaN(value) ? "-" : String.format("%.0f ms", value);
  }

  /**
   * Finds the marker spans sent but not yet seen that a query now finds in the store; the lag of
   * each is now minus its end. Markers of different partitions arrive out of order, so it looks
   * from the oldest marker still missing, not from the newest one seen.
   */
  private static final class MarkerLag {
    private final ClickHouseStore store;
    private final SteadySpanProducer producer;
    private final TreeSet<Long> missing = new TreeSet<>();

    MarkerLag(ClickHouseStore store, SteadySpanProducer producer) {
      this.store = store;
      this.producer = producer;
    }

    List<Double> poll() {
      for (Long end = producer.markerEnds().poll();
          end != null;
          end = producer.markerEnds().poll()) {
        missing.add(end);
      }
      if (missing.isEmpty()) {
        return List.of();
      }
      List<List<String>> rows =
          store
              .query(
                  "SELECT toUnixTimestamp64Nano(Timestamp) + Duration AS end FROM otel_traces"
                      + " WHERE ServiceName = '"
                      + SteadySpanProducer.MARKER_SERVICE
                      + "' AND SpanName = '"
                      + SteadySpanProducer.MARKER_SPAN
                      + "' AND Timestamp >= fromUnixTimestamp64Nano(toInt64("
                      + (missing.first() - 1_000_000L)
                      + ")) ORDER BY end")
              .rows();
      long now = System.currentTimeMillis() * 1_000_000L;
      List<Double> lags = new ArrayList<>(rows.size());
      for (List<String> row : rows) {
        long end = Long.parseLong(row.get(0));
        if (missing.remove(end)) {
          lags.add((now - end) / 1e6);
        }
      }
      return lags;
    }
  }
}
