package dev.llmlat.imports;

import dev.llmlat.otlpkafka.KafkaClientProperties;
import dev.llmlat.otlpkafka.SpanBatch;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes an import to the span topic in one Kafka transaction (the ingester reads committed
 * only), one record per trace keyed by its trace id, as {@code SpanPublisher} does.
 *
 * <p>An import of a known file ({@link ImportedFile}) is also idempotent. Its transactional id is
 * derived from the file's id, so a re-run fences an earlier run of the same file still alive and
 * aborts the transaction a killed run left open (at once, not after the transaction timeout); the
 * same transaction writes the file's record to the ledger topic ({@link KafkaImportLedger}), read
 * after fencing, so a file whose spans were committed is seen as imported and is not sent twice.
 * The ingester's deduplication tokens name offset ranges, which a re-sent import would not share: a
 * second copy has to be stopped here.
 *
 * <p>Each record of a known file carries {@link ImportHeaders}: the ingester claims the file for
 * this run ((the ingester's {@code ImportClaims})) and stores its rows, tagged with the file's id,
 * only while the claim is the run's; an import of the same file straight into the store that
 * claimed it first (or a run that published it before) keeps it, and the ingester drops these
 * records.
 */
public final class KafkaImportTarget implements ImportTarget {
  private final KafkaProducer<String, byte[]> producer;
  private final String bootstrap;
  private final String topic;
  private final ImportedFile file; // null: an untracked import (no ledger)
  private final KafkaImportLedger ledger;
  private final Optional<ImportRecord> earlier;
  private final AtomicReference<Exception> sendFailure = new AtomicReference<>();
  private final Callback onSent =
      (meta, e) -> {
        if (e != null) {
          sendFailure.compareAndSet(null, e);
        }
      };
  private final org.apache.kafka.common.header.Headers headers; // null: an untracked import
  private Consumer<ImportedFile> beforeCommit = file -> {};
  private boolean inTransaction;
  private boolean open = true;
  private long records;
  private long spans;

  public KafkaImportTarget(String bootstrap, String topic) {
    this(bootstrap, topic, KafkaClientProperties.none());
  }

  /** An import no ledger records (a live probe session: there is no file to recognise). */
  public KafkaImportTarget(String bootstrap, String topic, KafkaClientProperties kafkaClient) {
    this(bootstrap, topic, kafkaClient, null);
  }

  /**
   * An import of {@code file}, checked against the ledger once earlier runs are fenced off ({@link
   * #earlier()}).
   */
  public KafkaImportTarget(
      String bootstrap, String topic, KafkaClientProperties kafkaClient, ImportedFile file) {
    this.bootstrap = bootstrap;
    this.topic = topic;
    this.file = file;
    this.ledger = file == null ? null : new KafkaImportLedger(bootstrap, topic, kafkaClient);
    // each run is its own claimant: a second publication of a stored file is not stored again
    this.headers = file == null ? null : ImportHeaders.of(file, UUID.randomUUID().toString());
    this.producer =
        producer(
            kafkaClient,
            "llmlat-import-" + (file == null ? UUID.randomUUID().toString() : file.id()));
    try {
      // fences a live earlier run of this file and aborts what a killed one left open
      producer.initTransactions();
      if (ledger != null) {
        ledger.ensure();
      }
      this.earlier = ledger == null ? Optional.empty() : ledger.find(file.id());
    } catch (RuntimeException e) {
      producer.close(Duration.ZERO);
      throw e instanceof KafkaException k ? failure("could not start a transaction", k) : e;
    }
  }

  private KafkaProducer<String, byte[]> producer(
      KafkaClientProperties kafkaClient, String transactionalId) {
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 15_000);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "llmlat-import");
    kafkaClient.applyTo(p);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    p.put(ProducerConfig.ACKS_CONFIG, "all"); // transactions need it
    return new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
  }

  /**
   * Runs {@code step} just before the file's transaction commits: a test orders an import's parties
   * there.
   */
  public void beforeCommit(Consumer<ImportedFile> step) {
    this.beforeCommit = step;
  }

  @Override
  public Optional<ImportRecord> earlier() {
    return earlier;
  }

  @Override
  public void accept(SpanBatch batch) {
    begin();
    try {
      for (int i = 0; i < batch.recordCount(); i++) {
        producer.send(
            new ProducerRecord<>(topic, null, batch.traceId(i), batch.record(i), headers), onSent);
      }
    } catch (KafkaException e) {
      throw failure("could not send span records", e); // e.g. no broker within max.block.ms
    }
    records += batch.recordCount();
    spans += batch.spanCount();
    failIfSendFailed();
  }

  private void begin() {
    if (!inTransaction) {
      producer.beginTransaction();
      inTransaction = true;
    }
  }

  /**
   * Commits the spans and, for a known file, its ledger record with them. A commit that timed out
   * is retried once (Kafka allows it, and its outcome is then known) before giving up.
   */
  @Override
  public void commit() {
    begin();
    try {
      if (ledger != null) {
        Instant at = Instant.now();
        producer.send(
            ledger.record(new ImportRecord(file, ImportRecord.Status.DONE, spans, 0, at)), onSent);
      }
      producer.flush();
      failIfSendFailed();
      if (file != null) {
        beforeCommit.accept(file);
      }
      try {
        producer.commitTransaction();
      } catch (org.apache.kafka.common.errors.TimeoutException first) {
        producer.commitTransaction();
      }
    } catch (KafkaException e) {
      throw failure("could not commit the transaction", e);
    }
    inTransaction = false;
    open = false;
  }

  private void failIfSendFailed() {
    Exception e = sendFailure.get();
    if (e != null) {
      throw failure(
          "Kafka refused a span record", e instanceof KafkaException k ? k : new KafkaException(e));
    }
  }

  @Override
  public void abort() {
    if (open) {
      open = false;
      if (inTransaction) {
        inTransaction = false;
        producer.abortTransaction();
      }
    }
  }

  public long records() {
    return records;
  }

  @Override
  public String description() {
    return "Kafka " + bootstrap + " topic " + topic;
  }

  @Override
  public void close() {
    try {
      abort();
    } catch (RuntimeException e) {
      // The broker is away (or a later run fenced this one): its transaction coordinator aborts the
      // transaction, and read-committed consumers (the ingester) never see it. The error that got
      // us here is the news.
    } finally {
      producer.close(Duration.ZERO);
    }
  }

  /** Kafka's own exceptions name neither the cluster nor the topic: a message that does. */
  private IllegalStateException failure(String what, KafkaException e) {
    String why =
        e instanceof ProducerFencedException
                || e instanceof InvalidProducerEpochException
                || e.getCause() instanceof ProducerFencedException
            ? "another run importing the same file took over (it publishes the file; this run published nothing)"
            : e.getMessage();
    return new IllegalStateException(
        "Kafka at " + bootstrap + " (topic " + topic + "): " + what + ": " + why, e);
  }
}
