package dev.llmlat.otlpkafka.internal;

import dev.llmlat.otlpkafka.ExporterStats;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The exporter's bounded queue and its one sender thread. Callers only ever {@code offer}; all
 * waiting on Kafka (metadata, buffer space, the producer's creation) happens on the sender thread,
 * bounded by {@code max.block.ms}, and before the broker first answered by the start-up wait of
 * {@link #warmUp}. The Kafka producer reconnects by itself when the broker returns; records it
 * cannot deliver are counted as dropped.
 */
public final class KafkaSender {
  private static final Logger logger = Logger.getLogger(KafkaSender.class.getName());
  private static final long PRODUCER_RETRY_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** The sender's settings, validated by the builder. */
  public record Config(
      String bootstrapServers,
      String topic,
      int queueCapacity,
      Duration maxBlock,
      Duration logInterval,
      String compression,
      long bufferMemoryBytes,
      Map<String, Object> producerProperties) {}

  private record TraceBatch(String traceId, List<SpanData> spans) {}

  private record FlushRequest(CompletableResultCode result) {}

  private final Config config;
  private final BlockingQueue<Object> queue;
  private final Thread thread;
  private final CompletableResultCode shutdownResult = new CompletableResultCode();
  private final AtomicLong spansSent = new AtomicLong();
  private final AtomicLong recordsSent = new AtomicLong();
  private final AtomicLong droppedQueueFull = new AtomicLong();
  private final AtomicLong droppedSendFailed = new AtomicLong();
  private volatile boolean shutdown;
  private volatile String lastError;

  // sender thread only
  private final List<Object> drained = new ArrayList<>();
  private Producer<byte[], byte[]> producer;
  private long producerRetryAt;
  private long nextLogAt;
  private ExporterStats lastLogged;

  private KafkaSender(Config config) {
    this.config = config;
    // +1: room for a flush marker even when full of traces
    this.queue = new ArrayBlockingQueue<>(config.queueCapacity() + 1);
    this.thread = new Thread(this::run, "llmlat-kafka-span-exporter");
    thread.setDaemon(true);
    // background work: yield to request threads wherever the OS honours Java priorities
    thread.setPriority(Thread.MIN_PRIORITY);
    // The Kafka client loads classes by name through the context loader: make it ours.
    thread.setContextClassLoader(KafkaSender.class.getClassLoader());
  }

  public static KafkaSender start(Config config) {
    KafkaSender sender = new KafkaSender(config);
    sender.thread.start();
    return sender;
  }

  public boolean isShutdown() {
    return shutdown;
  }

  /** Enqueues one trace's spans without waiting; counts them as dropped when the queue is full. */
  public void offer(String traceId, List<SpanData> spans) {
    // keep the last slot for a flush marker
    if (queue.size() >= config.queueCapacity() || !queue.offer(new TraceBatch(traceId, spans))) {
      droppedQueueFull.addAndGet(spans.size());
    }
  }

  public CompletableResultCode flush() {
    CompletableResultCode result = new CompletableResultCode();
    if (shutdown || !queue.offer(new FlushRequest(result))) {
      result.fail();
    }
    return result;
  }

  public CompletableResultCode shutdown() {
    shutdown = true;
    thread.interrupt();
    return shutdownResult;
  }

  public ExporterStats stats() {
    return new ExporterStats(
        spansSent.get(),
        recordsSent.get(),
        droppedQueueFull.get(),
        droppedSendFailed.get(),
        Math.max(0, queue.size()),
        config.queueCapacity());
  }

  private void run() {
    nextLogAt = System.nanoTime() + config.logInterval().toNanos();
    try {
      warmUp();
      while (!shutdown) {
        Object item;
        try {
          item = queue.poll(Math.min(500, config.logInterval().toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          break; // shutdown
        }
        handle(item);
        // then whatever else the export left queued, in one go: one lock, no wake-up per trace
        if (item != null && queue.drainTo(drained, 256) > 0) {
          int i = 0;
          for (; i < drained.size() && !shutdown; i++) {
            handle(drained.get(i));
            maybeLog(false);
          }
          drained.subList(0, i).clear(); // what is left (shutdown) goes to drainOnShutdown
        }
        maybeLog(false);
      }
      drainOnShutdown();
    } catch (Throwable t) {
      logger.log(Level.SEVERE, "llmlat kafka exporter: sender thread failed", t);
    } finally {
      closeProducer();
      maybeLog(true);
      shutdownResult.succeed();
    }
  }

  /**
   * Connects and fetches the topic's metadata before sending anything. Until the broker has
   * answered once, a record would wait only {@code max.block.ms} for that metadata and then be
   * dropped, although the broker may just be slow to answer a process that is still starting on a
   * loaded machine: the spans of its first requests would be lost. So the sender waits here, the
   * queue (bounded as ever) holding what arrives, for as long as the producer lets a record already
   * sent wait for the broker ({@code delivery.timeout.ms}); after that, a broker that never
   * answered is down, and each record again waits at most {@code max.block.ms}.
   */
  private void warmUp() {
    Producer<byte[], byte[]> p = producer();
    if (p == null) {
      return;
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(deliveryTimeoutMs());
    while (!shutdown) {
      try {
        p.partitionsFor(config.topic());
        return;
      } catch (InterruptException e) {
        break; // shutdown
      } catch (TimeoutException e) {
        lastError = e.toString();
        if (System.nanoTime() - deadline >= 0) {
          return;
        }
        maybeLog(false); // drops of a full queue meanwhile are logged as ever
      } catch (RuntimeException e) {
        // not for lack of an answer (e.g. not authorized): waiting would not help
        lastError = e.toString();
        return;
      }
    }
    // shutdown's interrupt: what is queued is still offered before the producer closes
    Thread.interrupted();
  }

  /** The producer's delivery timeout, as configured (ours, or the user's producer settings). */
  private long deliveryTimeoutMs() {
    Object value = producerConfig().get(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG);
    return value instanceof Number
        ? ((Number) value).longValue()
        : Long.parseLong(value.toString().trim());
  }

  private void drainOnShutdown() {
    // Offer the queued traces one last time, bounded: shutdown must not hang the application.
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    queue.drainTo(drained); // after any left from an interrupted batch, in order
    for (Object item : drained) {
      if (System.nanoTime() < deadline) {
        handle(item);
      } else {
        discard(item);
      }
    }
    drained.clear();
    for (Object left; (left = queue.poll()) != null; ) {
      discard(left);
    }
  }

  private void discard(Object left) {
    if (left instanceof TraceBatch) {
      droppedSendFailed.addAndGet(((TraceBatch) left).spans().size());
    } else {
      ((FlushRequest) left).result().fail();
    }
  }

  private void handle(Object item) {
    if (item == null) {
      return;
    }
    if (item instanceof FlushRequest) {
      Producer<byte[], byte[]> p = producer();
      if (p != null) {
        p.flush();
      }
      ((FlushRequest) item).result().succeed();
      return;
    }
    TraceBatch batch = (TraceBatch) item;
    int spans = batch.spans().size();
    Producer<byte[], byte[]> p = producer();
    if (p == null) {
      droppedSendFailed.addAndGet(spans);
      return;
    }
    try {
      byte[] value = TraceRecordEncoder.encode(batch.spans());
      ProducerRecord<byte[], byte[]> record =
          new ProducerRecord<>(
              config.topic(), batch.traceId().getBytes(StandardCharsets.US_ASCII), value);
      p.send(
          record,
          (metadata, error) -> {
            if (error == null) {
              spansSent.addAndGet(spans);
              recordsSent.incrementAndGet();
            } else {
              droppedSendFailed.addAndGet(spans);
              lastError = error.toString();
            }
          });
    } catch (RuntimeException e) {
      // metadata or buffer space not available within max.block.ms (broker down), or a bad record
      droppedSendFailed.addAndGet(spans);
      lastError = e.toString();
    }
  }

  private Producer<byte[], byte[]> producer() {
    if (producer != null || System.nanoTime() < producerRetryAt) {
      return producer;
    }
    try {
      producer =
          new KafkaProducer<>(
              producerConfig(), new ByteArraySerializer(), new ByteArraySerializer());
    } catch (RuntimeException e) {
      // e.g. unresolvable bootstrap servers: retry later, count what arrives meanwhile
      producerRetryAt = System.nanoTime() + PRODUCER_RETRY_NANOS;
      lastError = e.toString();
      logger.log(
          Level.WARNING,
          "llmlat kafka exporter: cannot create the Kafka producer for "
              + config.bootstrapServers()
              + ": "
              + e);
    }
    return producer;
  }

  Map<String, Object> producerConfig() {
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "llmlat-span-exporter");
    // Kafka's own defaults, not the Collector exporter's acks=1: with acks=1 a leader that dies
    // before
    // its followers copied a batch loses those spans; sending is asynchronous, so waiting for the
    // in-sync replicas costs no request latency. Idempotence keeps a retried batch from landing
    // twice.
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    // Spans already wait up to the batch span processor's delay; lingering a little longer lets one
    // export's traces (arriving in a burst) travel as a few large produce requests instead of many
    // small ones: fewer wake-ups of the producer's network thread and of the broker.
    p.put(ProducerConfig.LINGER_MS_CONFIG, 50);
    p.put(
        ProducerConfig.BATCH_SIZE_CONFIG,
        (int) Math.min(256 * 1024, Math.max(16 * 1024, config.bufferMemoryBytes() / 16)));
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, config.maxBlock().toMillis());
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
    p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, config.bufferMemoryBytes());
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, config.compression());
    p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 100);
    p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 2_000);
    p.put(ProducerConfig.METRIC_REPORTER_CLASSES_CONFIG, ""); // no JMX reporter inside the gateway
    p.putAll(config.producerProperties());
    return p;
  }

  private void closeProducer() {
    if (producer != null) {
      try {
        producer.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        logger.log(Level.FINE, "closing the Kafka producer", e);
      }
      producer = null;
    }
  }

  private void maybeLog(boolean force) {
    long now = System.nanoTime();
    if (!force && now < nextLogAt) {
      return;
    }
    nextLogAt = now + config.logInterval().toNanos();
    ExporterStats stats = stats();
    if (stats.equals(lastLogged)
        || (lastLogged == null && stats.recordsSent() == 0 && stats.spansDropped() == 0)) {
      return; // nothing new (or nothing yet) to say
    }
    boolean newDrops =
        lastLogged == null
            ? stats.spansDropped() > 0
            : stats.spansDropped() > lastLogged.spansDropped();
    lastLogged = stats;
    String line =
        "llmlat kafka exporter ("
            + config.topic()
            + " at "
            + config.bootstrapServers()
            + "): "
            + stats.spansSent()
            + " spans sent in "
            + stats.recordsSent()
            + " records, "
            + stats.spansDropped()
            + " spans dropped (queue full "
            + stats.spansDroppedQueueFull()
            + ", send failed "
            + stats.spansDroppedSendFailed()
            + "), queue "
            + stats.queued()
            + "/"
            + stats.queueCapacity()
            + (newDrops && lastError != null ? ", last error: " + lastError : "");
    logger.log(newDrops ? Level.WARNING : Level.INFO, line);
  }

  @Override
  public String toString() {
    return config.topic() + " at " + config.bootstrapServers();
  }
}
