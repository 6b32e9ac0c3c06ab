package dev.llmlat.live;

import dev.llmlat.attribution.Attribution;
import dev.llmlat.live.internal.LiveMetrics;
import dev.llmlat.live.internal.LiveTopology;
import dev.llmlat.live.internal.TraceAssembler;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.store.ClickHouseStore;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Live attribution: a Kafka Streams application over the span topic that attributes each request
 * seconds after its last span, with the attribution core {@code analyze} uses, and writes its row
 * to {@code llm_request_attribution}. Instances with the same application id share the topic's
 * partitions (Kafka Streams' rebalancing); a task that moves or an instance that restarts resumes
 * from its state stores' changelogs. Exactly-once processing ({@code exactly_once_v2}) keeps the
 * state consistent with the records consumed; how rows stay exactly once in the store is said in
 * {@link TraceAssembler}.
 *
 * <p>Lifecycle: {@link #start()} describes the topic and starts the stream threads; {@link
 * #close()} stops them (the current transaction commits), leaves the group and closes the state
 * stores.
 */
public final class LiveAttributor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LiveAttributor.class);

  /** {@code AnalyzerVersion} of the rows: tells live rows from {@code analyze}'s. */
  public static final String VERSION = "llmlat-live 0.1";

  private final LiveConfig config;
  private final ClickHouseStore store;
  private final Consumer<? super Attribution> attributed;
  private final LiveMetrics metrics = new LiveMetrics();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile Throwable failure;
  private KafkaStreams streams;
  private ScheduledExecutorService reporter;
  private String internalTopic;

  public LiveAttributor(LiveConfig config, ClickHouseStore store) {
    this(config, store, a -> {});
  }

  /**
   * With {@code attributed} told of each request's first attribution once its row is written (a
   * late span's re-attribution replaces the row and is not told again), on the stream thread.
   */
  public LiveAttributor(
      LiveConfig config, ClickHouseStore store, Consumer<? super Attribution> attributed) {
    this.config = config;
    this.store = store;
    this.attributed = attributed;
  }

  public LiveStats metrics() {
    return metrics.snapshot();
  }

  /** The error that stopped the stream threads, if one did. */
  public Throwable failure() {
    return failure;
  }

  /** True once every stream thread runs its share of the partitions. */
  public boolean isRunning() {
    return streams != null && streams.state() == KafkaStreams.State.RUNNING;
  }

  public synchronized LiveAttributor start() {
    if (streams != null) {
      throw new IllegalStateException("already started");
    }
    int partitions = partitions();
    TraceAssembler.Settings settings =
        new TraceAssembler.Settings(
            config.grace(),
            config.retention(),
            partitions,
            config.punctuateEvery(),
            config.evidencePerPair(),
            VERSION);
    internalTopic = config.applicationId() + LiveTopology.INTERNAL_TOPIC_SUFFIX;
    streams =
        new KafkaStreams(
            LiveTopology.build(config.topic(), settings, store, metrics, attributed), properties());
    streams.setUncaughtExceptionHandler(
        e -> {
          failure = e;
          LOG.error("live attribution stopped: {}", e.toString(), e);
          return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    streams.setStateListener(
        (now, before) -> {
          if (now == KafkaStreams.State.RUNNING) {
            LOG.info("owns partitions: {}", owned());
          } else if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
            stopped.countDown();
          }
        });
    streams.start();
    if (!config.reportInterval().isZero()) {
      reporter =
          Executors.newSingleThreadScheduledExecutor(
              r -> Thread.ofPlatform().daemon().name("llmlat-live-report").unstarted(r));
      long every = config.reportInterval().toMillis();
      reporter.scheduleAtFixedRate(this::report, every, every, TimeUnit.MILLISECONDS);
    }
    return this;
  }

  /**
   * Waits until the stream threads stop on their own (a failure) or {@code timeout} passes; true if
   * they did.
   */
  public boolean awaitStop(Duration timeout) throws InterruptedException {
    return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void close() {
    if (reporter != null) {
      reporter.shutdownNow();
    }
    if (streams != null) {
      // leaving the group hands the partitions over now, not after the session timeout
      if (!streams.close(
          CloseOptions.timeout(Duration.ofSeconds(60))
              .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP))) {
        LOG.warn(
            "live attribution did not stop within 60 s; its uncommitted work will be redone from the changelogs");
      } else {
        LOG.info("live attribution stopped cleanly: {}", metrics.snapshot());
      }
    }
  }

  /**
   * The span topic's partition count: the internal topic gets as many (a trace's assembly lives in
   * one).
   */
  private int partitions() {
    return SpanTopics.describe(config.kafkaClient(), config.bootstrapServers(), config.topic())
        .partitions()
        .size();
  }

  private java.util.Properties properties() {
    Map<String, Object> p = new HashMap<>();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, config.applicationId());
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(StreamsConfig.STATE_DIR_CONFIG, config.stateDir().toAbsolutePath().toString());
    p.put(
        StreamsConfig.NUM_STREAM_THREADS_CONFIG,
        1); // the core attributes a batch on all cores itself
    p.put(
        StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
        (int) config.sessionTimeout().toMillis());
    p.put(
        StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
        (int) config.sessionTimeout().toMillis() / 3);
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    // A poll hands out one partition's fetched records before the next's, and the thread processes
    // them before it polls again; with the consumer's 1 MB a partition's fetch of compressed span
    // records held thousands of them, and a backlog was read a partition at a time, its traces
    // complete before the steps other partitions held for them were read. Small fetches interleave.
    p.put(
        StreamsConfig.mainConsumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG),
        64 * 1024);
    // Every commit is a transaction over the internal topic's and the changelogs' partitions, whose
    // markers the broker writes to each; exactly-once's 100 ms default spent most of the thread's
    // time waiting on them. Committing as often as completion is checked keeps spans' way through
    // the
    // internal topic (visible once committed) small against the grace.
    p.put(
        StreamsConfig.COMMIT_INTERVAL_MS_CONFIG,
        Math.max(100L, config.punctuateEvery().toMillis()));
    config.kafkaClient().applyTo(p);
    // what exactly-once depends on, over anything the user's file says
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    java.util.Properties props = new java.util.Properties();
    props.putAll(p);
    return props;
  }

  /** The internal topic's partitions this instance's threads own now. */
  private List<Integer> owned() {
    TreeSet<Integer> owned = new TreeSet<>();
    for (ThreadMetadata t : streams.metadataForLocalThreads()) {
      t.activeTasks()
          .forEach(
              task ->
                  task.topicPartitions().stream()
                      .filter(tp -> tp.topic().equals(internalTopic))
                      .map(TopicPartition::partition)
                      .forEach(owned::add));
    }
    return List.copyOf(owned);
  }

  private void report() {
    try {
      long lag = 0;
      boolean known = false;
      for (Map.Entry<MetricName, ? extends Metric> m : streams.metrics().entrySet()) {
        MetricName n = m.getKey();
        if (n.name().equals("records-lag") && config.topic().equals(n.tags().get("topic"))) {
          if (m.getValue().metricValue() instanceof Double d && !d.isNaN()) {
            lag += d.longValue();
            known = true;
          }
        }
      }
      metrics.lag = known ? lag : -1;
      LiveStats s = metrics.snapshot();
      double[] delay = metrics.drainDelays();
      LOG.info(
          String.format(
              "live: %,d traces waiting, %,d held; total %,d attributed (%,d late re-attributions), %,d rows,"
                  + " %,d spans, %,d undecodable records; last span to row p50 %s p99 %s (%d traces); lag %s records;"
                  + " store failures %,d",
              s.waiting(),
              s.held(),
              s.attributions(),
              s.lateReattributions(),
              s.rowsWritten(),
              s.spans(),
              s.undecodable(),
              ms(delay[0]),
              ms(delay[1]),
              (long) delay[2],
              s.lag() < 0 ? "?" : String.format("%,d", s.lag()),
              s.storeFailures()));
    } catch (RuntimeException e) {
      LOG.warn("progress report failed: {}", e.toString());
    }
  }

  private static String ms(double v) {
    return Double.isNaN(v) ? "-" : String.format("%,.0f ms", v);
  }
}
