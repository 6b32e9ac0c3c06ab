package dev.llmlat.otlpkafka;

import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes OTLP span batches to the span topic the way the Collector's kafka exporter does with
 * {@code partition_traces_by_id: true}: one record per trace, keyed by the trace id in hex, value
 * an {@code ExportTraceServiceRequest}. {@link #flush()} waits until the broker acknowledged all.
 */
public final class SpanPublisher implements AutoCloseable {
  private final KafkaProducer<String, byte[]> producer;
  private final String topic;
  private final String bootstrapServers;
  private final List<Future<RecordMetadata>> inFlight = new ArrayList<>();
  // a broker gone fails every record in flight alike: flush() says the first and counts the rest
  private final RepeatedFailures sendFailures = new RepeatedFailures("send failures");
  private long records;

  public SpanPublisher(String bootstrapServers, String topic) {
    this(bootstrapServers, topic, null);
  }

  /**
   * With a {@code transactionalId}, everything published between {@link #begin()} and {@link
   * #commit()} becomes visible to read-committed consumers (the ingester) at once, or not at all
   * after {@link #abort()}: an import that fails half-way leaves nothing behind.
   */
  public SpanPublisher(String bootstrapServers, String topic, String transactionalId) {
    this(bootstrapServers, topic, transactionalId, KafkaClientProperties.none());
  }

  /** As above, with the user's Kafka client settings (security) over llmlat's defaults. */
  public SpanPublisher(
      String bootstrapServers,
      String topic,
      String transactionalId,
      KafkaClientProperties kafkaClient) {
    Map<String, Object> p = new HashMap<>();
    if (transactionalId != null) {
      p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    }
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "llmlat-publisher");
    kafkaClient.applyTo(p);
    p.put(ProducerConfig.ACKS_CONFIG, "all"); // transactions and flush() semantics need it
    this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
    this.topic = topic;
    this.bootstrapServers = bootstrapServers;
    if (transactionalId != null) {
      try {
        producer.initTransactions();
      } catch (KafkaException e) {
        producer.close(Duration.ZERO);
        throw failure("could not start a transaction", e);
      }
    }
  }

  public void begin() {
    producer.beginTransaction();
  }

  /**
   * Flushes and commits the transaction begun with {@link #begin()}. A commit that timed out is
   * retried once (Kafka allows it, and its outcome is then known) before giving up.
   */
  public void commit() {
    flush();
    try {
      producer.commitTransaction();
    } catch (org.apache.kafka.common.errors.TimeoutException first) {
      try {
        producer.commitTransaction();
      } catch (KafkaException e) {
        throw failure("could not commit the transaction", e);
      }
    } catch (KafkaException e) {
      throw failure("could not commit the transaction", e);
    }
  }

  public void abort() {
    inFlight.clear();
    producer.abortTransaction();
  }

  /** Splits {@code request} per trace and sends one record for each; returns the records sent. */
  public int publish(ExportTraceServiceRequest request) {
    return publish(SpanBatch.of(request));
  }

  /**
   * Sends each of the batch's per-trace records, keyed by its trace id; returns the records sent.
   */
  public int publish(SpanBatch batch) {
    try {
      for (int i = 0; i < batch.recordCount(); i++) {
        inFlight.add(
            producer.send(
                new ProducerRecord<>(topic, batch.traceId(i), batch.record(i)),
                (metadata, error) -> {
                  if (error != null) {
                    sendFailures.record(String.valueOf(error.getMessage()));
                  }
                }));
      }
    } catch (KafkaException e) {
      throw failure("could not send span records", e); // e.g. no broker within max.block.ms
    }
    records += batch.recordCount();
    if (inFlight.size() > 10_000) {
      flush();
    }
    return batch.recordCount();
  }

  /** How many spans an OTLP request carries. */
  public static int spanCount(ExportTraceServiceRequest request) {
    return request.getResourceSpansList().stream()
        .flatMap(r -> r.getScopeSpansList().stream())
        .mapToInt(s -> s.getSpansCount())
        .sum();
  }

  public long records() {
    return records;
  }

  /** Waits for every record sent so far to be acknowledged; throws naming the failure. */
  public void flush() {
    producer.flush();
    try {
      for (Future<RecordMetadata> f : inFlight) {
        f.get(30, TimeUnit.SECONDS);
      }
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new IllegalStateException(
          "Kafka refused a span record on "
              + topic
              + ": "
              + cause.getMessage()
              + sendFailures.andMore(String.valueOf(cause.getMessage()))
              + storageHint(cause),
          cause);
    } catch (TimeoutException e) {
      throw new IllegalStateException(
          "Kafka at "
              + bootstrapServers
              + " did not acknowledge span records on "
              + topic
              + " within 30 s",
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing spans", e);
    } finally {
      inFlight.clear();
    }
  }

  /**
   * The broker could not write its log (a full or failed disk), which Kafka's messages leave to be
   * guessed.
   */
  private static String storageHint(Throwable cause) {
    return cause instanceof org.apache.kafka.common.errors.KafkaStorageException
            || cause instanceof org.apache.kafka.common.errors.NotEnoughReplicasException
        ? "; the broker cannot write its log directory: is its disk full?"
        : "";
  }

  /** Kafka's own exceptions name neither the cluster nor the topic: a message that does. */
  private IllegalStateException failure(String what, KafkaException e) {
    return new IllegalStateException(
        "Kafka at " + bootstrapServers + " (topic " + topic + "): " + what + ": " + e.getMessage(),
        e);
  }

  /**
   * Closes without waiting for unacknowledged records (after an abort, or when the broker is away).
   */
  public void closeNow() {
    inFlight.clear();
    producer.close(Duration.ZERO);
  }

  @Override
  public void close() {
    try {
      flush();
    } finally {
      producer.close(Duration.ofSeconds(10));
    }
  }
}
