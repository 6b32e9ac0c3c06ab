package dev.llmlat.ingest;

import dev.llmlat.imports.ImportHeaders;
import dev.llmlat.imports.ImportedFile;
import dev.llmlat.ingest.imports.ImportClaims;
import dev.llmlat.ingest.imports.StoreImportLedger;
import dev.llmlat.ingest.spans.OtlpRecordDecoder;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.store.ClickHouseStore;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes OTLP span batches from Kafka and writes them to the store: spans to {@code otel_traces},
 * per-kernel GPU spans to {@code gpu_kernels}, undecodable records to the dead-letter topic with
 * the reason.
 *
 * <p>Offsets are committed only after the store acknowledged the insert. Retries do not duplicate
 * rows: before inserting a partition's batch the ingester commits its intent (the batch's offset
 * range, in the commit's metadata, at the unchanged position); the insert carries a deduplication
 * token made of the topic's id and that range. After a crash between insert and commit, the next
 * ingester reads the intent, re-forms exactly the same batch, and the store drops the repeat.
 *
 * <p>Several ingesters in one consumer group share the partitions. A partition leaving this
 * ingester in a rebalance has its batch written and committed first; a batch still being re-formed
 * is dropped instead (its intent stays committed, so the next owner re-forms it whole); a commit
 * the group refuses mid-rebalance rewinds the partition to the batch's start, so whoever owns it
 * next reads the batch again and the deduplication token keeps it from being stored twice.
 *
 * <p>Records an import published ({@link ImportHeaders}) are stored as that import's rows (tagged
 * with its id, as an import into the store tags them) only while the file's claim ({@link
 * ImportClaims}) is that import run's: the first record of a file nobody claimed claims it, and
 * records of a file claimed by an import straight into the store, or by another run that published
 * it before, are dropped. One file, one copy, whichever way it came and however the imports
 * interleave. The claims are read once per batch for the imports in it. A stored import is also
 * recorded in the store's ledger ({@link StoreImportLedger}, status ingested), for messages; a file
 * the ledger holds without a claim (imported before claims existed) is not stored again.
 *
 * <p>The store writes a batch on a thread of its own ({@link BackgroundInsert}) while the loop
 * reads, decodes and encodes the next one; one batch is in flight at a time. The loop commits the
 * written batch's end once the insert has returned, and it commits the next batch's intent only
 * after that, so the committed position never passes rows the store has not acknowledged.
 *
 * <p>This class is the consumer loop and its batches; {@code DeadLetters} writes the dead letters,
 * {@code ImportDeduplication} decides which imports' records are stored, {@code StoreRetry} retries
 * store calls and {@code ProgressReport} logs progress and the consumer lag ({@code ConsumerLag}).
 *
 * <p>Lifecycle: {@link #start()} runs the loop on its own thread; {@link #close()} stops polling,
 * writes and commits what it holds, and closes the clients.
 */
public final class SpanIngester implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SpanIngester.class);
  static final String PENDING = "llmlat-pending:";

  private final IngesterConfig config;
  private final ClickHouseStore store;
  private final IngestMetrics metrics = new IngestMetrics();
  private final Map<TopicPartition, PartitionBatch> batches = new HashMap<>();

  /**
   * Partitions sought back to a batch's start since the last poll: the rest of that poll's records
   * for them come again.
   */
  private final Set<TopicPartition> rewound = new HashSet<>();

  private final StoreRetry retry;
  private final StoreImportLedger ledger;
  private ImportClaims claims;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile boolean running;
  private volatile Throwable failure;
  private Thread thread;
  private Runnable afterInsert = () -> {}; // test hook: a crash between insert and commit
  private Consumer<Set<String>> beforeInsert =
      imports -> {}; // test hook: a batch with these imports about to go in

  // set by start(), before the loop's thread starts
  private String topicId;
  private KafkaConsumer<byte[], byte[]> consumer;
  private DeadLetters deadLetters;
  private ImportDeduplication importDeduplication;
  private BackgroundInsert inserting;

  public SpanIngester(IngesterConfig config, ClickHouseStore store) {
    this.config = config;
    this.store = store;
    this.retry = new StoreRetry(store.description(), metrics, () -> running);
    this.ledger = new StoreImportLedger(store);
    this.claims = new ImportClaims(store);
  }

  void afterInsert(Runnable hook) {
    this.afterInsert = hook;
  }

  void beforeInsert(Consumer<Set<String>> hook) {
    this.beforeInsert = hook;
  }

  void claims(ImportClaims claims) {
    this.claims = claims;
  }

  public IngestMetrics metrics() {
    return metrics;
  }

  /** The error that stopped the loop, if one did. */
  public Throwable failure() {
    return failure;
  }

  public boolean isRunning() {
    return running && stopped.getCount() > 0;
  }

  public synchronized SpanIngester start() {
    if (thread != null) {
      throw new IllegalStateException("already started");
    }
    topicId = topicId();
    consumer =
        new KafkaConsumer<>(
            consumerProperties(), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    deadLetters =
        new DeadLetters(
            new KafkaProducer<>(
                producerProperties(), new ByteArraySerializer(), new ByteArraySerializer()),
            config.deadLetterTopic(),
            metrics);
    importDeduplication = new ImportDeduplication(claims, ledger, retry);
    inserting = new BackgroundInsert(metrics);
    running = true;
    thread = new Thread(this::run, "llmlat-ingest");
    thread.start();
    return this;
  }

  /**
   * Waits until the loop ends on its own (a failure) or {@code timeout} passes; true if it ended.
   */
  public boolean awaitStop(Duration timeout) throws InterruptedException {
    return stopped.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    running = false;
    try {
      if (thread != null && !stopped.await(60, TimeUnit.SECONDS)) {
        LOG.warn("ingester did not stop within 60 s; its uncommitted batch will be replayed");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The topic's id: offsets restart at 0 when a topic is re-created (or the broker is new), so
   * deduplication tokens name the topic incarnation, not just its name.
   */
  private String topicId() {
    return SpanTopics.describe(config.kafkaClient(), config.bootstrapServers(), config.topic())
        .topicId()
        .toString();
  }

  private Map<String, Object> consumerProperties() {
    Map<String, Object> p = new HashMap<>();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    // Imports publish in transactions: an aborted import is never stored.
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "llmlat-ingest-" + ProcessHandle.current().pid());
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int) config.sessionTimeout().toMillis());
    p.put(
        ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, (int) config.sessionTimeout().toMillis() / 3);
    if (config.instanceId() != null) {
      // static membership: a restarted ingester gets its partitions back at once, not after the
      // session timeout
      p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.instanceId());
    }
    return ownSettingsLast(p);
  }

  private Map<String, Object> producerProperties() {
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "llmlat-ingest-dlq");
    return ownSettingsLast(p);
  }

  /** The user's settings over the defaults above, then the ones exactly-once depends on again. */
  private Map<String, Object> ownSettingsLast(Map<String, Object> p) {
    Map<String, Object> own = new HashMap<>(p);
    config.kafkaClient().applyTo(p);
    for (String key :
        List.of(
            ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
            ProducerConfig.ACKS_CONFIG)) {
      if (own.containsKey(key)) {
        p.put(key, own.get(key));
      }
    }
    return p;
  }

  private void run() {
    ProgressReport progress =
        new ProgressReport(config.reportInterval(), metrics, System.nanoTime());
    try {
      consumer.subscribe(List.of(config.topic()), new Rebalance());
      while (running) {
        // an old batch waiting for the store is handed over soon after the store is done
        boolean waiting =
            inserting.inFlight() && batches.values().stream().anyMatch(b -> !b.isEmpty());
        var records = consumer.poll(Duration.ofMillis(waiting ? 10 : 100));
        rewound.clear();
        for (ConsumerRecord<byte[], byte[]> record : records) {
          accept(record);
          if (batchFull() || (inserting.idle() && batchOld())) {
            flush(new ArrayList<>(batches.values()));
          }
        }
        if (inserting.idle()) {
          finishInsert(); // committed now rather than with the next batch
          if (batchOld()) {
            flush(new ArrayList<>(batches.values()));
          }
        }
        progress.maybeLog(System.nanoTime(), consumer::metrics);
      }
      flush(new ArrayList<>(batches.values()));
      finishInsert();
      LOG.info("ingester stopped cleanly: {}", metrics.snapshot());
    } catch (Throwable t) {
      failure = t;
      running = false; // an insert still retrying gives up after its third attempt
      inserting.abandon(); // the store is not closed under it
      batches.clear();
      LOG.error(
          "ingester stopped without committing its current batch (it will be replayed): {}",
          t.toString());
    } finally {
      running = false;
      closeClients();
      stopped.countDown();
    }
  }

  private void closeClients() {
    deadLetters.close();
    try {
      consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
    } catch (RuntimeException e) {
      LOG.warn("closing the consumer: {}", e.toString());
    }
    inserting
        .close(); // after the consumer: its close revokes the partitions, which may still write
  }

  private void accept(ConsumerRecord<byte[], byte[]> record) {
    TopicPartition tp = new TopicPartition(record.topic(), record.partition());
    if (rewound.contains(tp)) {
      return; // read again from the batch's start
    }
    PartitionBatch batch = batches.computeIfAbsent(tp, PartitionBatch::new);
    if (batch.replayEnd >= 0 && record.offset() > batch.replayEnd) {
      // the replayed range is over although its last record did not come back (retention): it ends
      // here
      if (batch.isEmpty()) {
        batch.replayEnd = -1;
      } else {
        batch.last = batch.replayEnd;
        flush(List.of(batch));
        if (rewound.contains(tp)) {
          return;
        }
      }
    }
    metrics.records.incrementAndGet();
    try {
      ExportTraceServiceRequest request = OtlpRecordDecoder.decode(record.value());
      Optional<ImportedFile> imported = ImportHeaders.read(record.headers());
      if (imported.isPresent()
          && !importDeduplication.stores(
              imported.get(), ImportHeaders.claimant(record.headers()))) {
        metrics.importSpansSkipped.addAndGet(spanCount(request));
      } else {
        int before = batch.size();
        batch.rows.add(request, imported.map(ImportedFile::id).orElse(null));
        imported.ifPresent(f -> batch.imports.putIfAbsent(f.id(), f));
        metrics.pendingSpans.addAndGet(batch.size() - before);
      }
    } catch (OtlpRecordDecoder.InvalidRecordException e) {
      deadLetters.send(record, e.getMessage());
    }
    if (batch.first < 0) {
      batch.first = record.offset();
      batch.firstAtNanos = System.nanoTime();
    }
    batch.last = record.offset();
    if (batch.replayEnd >= 0 && record.offset() == batch.replayEnd) {
      flush(List.of(batch));
    }
  }

  private static long spanCount(ExportTraceServiceRequest request) {
    long n = 0;
    for (var rs : request.getResourceSpansList()) {
      for (var ss : rs.getScopeSpansList()) {
        n += ss.getSpansCount();
      }
    }
    return n;
  }

  private boolean batchFull() {
    long spans = 0;
    long bytes = 0;
    for (PartitionBatch b : batches.values()) {
      if (!b.replayIncomplete()) { // bounded by its predecessor's batch; written when whole
        spans += b.size();
        bytes += b.rows.bytes();
      }
    }
    return spans >= config.maxBatchSpans() || bytes >= config.maxBatchBytes();
  }

  private boolean batchOld() {
    long now = System.nanoTime();
    for (PartitionBatch b : batches.values()) {
      if (!b.isEmpty()
          && !b.replayIncomplete()
          && now - b.firstAtNanos >= config.linger().toNanos()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Intent, dead letters, insert, commit: in that order, for every non-empty batch given (a
   * replayed batch only once it is whole). The insert in flight is finished first: its end must be
   * committed before these intents move the committed position past it. These batches then go to
   * the store in the background while the loop reads on; {@link #finishInsert()} commits them.
   */
  private void flush(Collection<PartitionBatch> candidates) {
    if (candidates.stream().noneMatch(PartitionBatch::ready)) {
      return;
    }
    finishInsert(); // may rewind a partition, emptying its batch: which batches are ready is
    // decided after it
    List<PartitionBatch> ready = candidates.stream().filter(PartitionBatch::ready).toList();
    if (ready.isEmpty()) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> intents = new HashMap<>();
    for (PartitionBatch b : ready) {
      intents.put(b.partition, new OffsetAndMetadata(b.first, PENDING + b.end()));
    }
    if (!commit(intents)) {
      for (PartitionBatch b : ready) {
        rewind(b.partition, b.first, b.replayEnd);
      }
      return;
    }
    deadLetters.flush();
    for (PartitionBatch b : ready) {
      importDeduplication.recordStored(b.imports.values());
    }
    Set<String> importsInBatch = new HashSet<>();
    ready.forEach(b -> importsInBatch.addAll(b.imports.keySet()));
    beforeInsert.accept(importsInBatch);
    List<SealedBatch> sealed = ready.stream().map(PartitionBatch::seal).toList();
    importDeduplication.batchDone(); // records read from here on belong to the next batch
    inserting.start(sealed, this::insert);
  }

  /** On the insert's thread: one sealed batch into the store, then its counts. */
  private void insert(SealedBatch b) {
    int spans = b.rows().spans();
    int kernels = b.rows().kernels();
    retry.run("insert", () -> b.rows().insertInto(store, b.token(topicId)));
    if (b.replayed()) {
      metrics.replayedBatches.incrementAndGet();
    }
    metrics.spans.addAndGet(spans);
    metrics.kernels.addAndGet(kernels);
    metrics.pendingSpans.addAndGet(-(spans + kernels));
    metrics.batches.incrementAndGet();
  }

  /**
   * Waits for the insert in flight, if any, and commits its batches' ends; when the group refuses
   * the commit, their partitions are read again from the written batch's start.
   */
  private void finishInsert() {
    List<SealedBatch> written = inserting.await();
    if (written.isEmpty()) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> done = new HashMap<>();
    for (SealedBatch b : written) {
      done.put(b.partition(), new OffsetAndMetadata(b.end() + 1, ""));
    }
    afterInsert.run();
    if (!commit(done)) {
      for (SealedBatch b : written) {
        rewind(
            b.partition(), b.first(), b.end()); // it may be stored: re-formed whole under its token
      }
    }
  }

  /**
   * Commits, or returns false when the group refuses because it is rebalancing (or has already
   * moved on without this member); the caller then rewinds the partitions ({@link #rewind}). The
   * committed state is then still the one before: the batch's intent if it was inserted, so the
   * next owner (this ingester or another) re-forms exactly that batch and the store drops the
   * repeat.
   */
  private boolean commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
    try {
      consumer.commitSync(offsets);
      return true;
    } catch (RebalanceInProgressException | CommitFailedException e) {
      LOG.info(
          "group {} rebalancing, {} not committed; re-reading {} from the batch start: {}",
          config.groupId(),
          offsets.values().stream().anyMatch(o -> o.metadata().startsWith(PENDING))
              ? "intent"
              : "stored batch",
          offsets.keySet(),
          e.getMessage().lines().findFirst().orElse(""));
      return false;
    }
  }

  /**
   * Reads {@code partition} again from offset {@code from}: the batch in the making there is
   * dropped (its records come again, the rest of this poll's included) and the next one must end at
   * {@code replayEnd} (-1: anywhere).
   */
  private void rewind(TopicPartition partition, long from, long replayEnd) {
    PartitionBatch b = batches.get(partition);
    if (b != null) {
      metrics.pendingSpans.addAndGet(-b.size());
      b.reset();
      b.replayEnd = replayEnd;
    }
    if (consumer.assignment().contains(partition)) {
      consumer.seek(partition, from);
    }
    rewound.add(partition);
  }

  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      if (failure != null) {
        return; // after a failure nothing more is written: the next owner replays the batch
      }
      List<PartitionBatch> revoked = new ArrayList<>();
      for (TopicPartition tp : partitions) {
        PartitionBatch b = batches.get(tp);
        if (b != null) {
          revoked.add(b);
        }
      }
      flush(revoked);
      finishInsert(); // written and committed while the partitions are still ours
      forget(partitions); // a replay batch not yet whole: its intent stays committed for the next
      // owner
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      inserting.forget(
          partitions); // an insert of theirs in flight is not committed: the new owner replays it
      forget(partitions); // not ours any more: the new owner replays them
    }

    private void forget(Collection<TopicPartition> partitions) {
      for (TopicPartition tp : partitions) {
        PartitionBatch b = batches.remove(tp);
        if (b != null) {
          metrics.pendingSpans.addAndGet(-b.size());
        }
      }
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      LOG.info(
          "owns partitions: {}",
          consumer.assignment().stream().map(TopicPartition::partition).sorted().toList());
      if (partitions.isEmpty()) {
        return;
      }
      Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.copyOf(partitions));
      for (TopicPartition tp : partitions) {
        PartitionBatch b = batches.computeIfAbsent(tp, PartitionBatch::new);
        OffsetAndMetadata c = committed.get(tp);
        if (c != null && c.metadata() != null && c.metadata().startsWith(PENDING)) {
          b.replayEnd = Long.parseLong(c.metadata().substring(PENDING.length()));
          LOG.info(
              "{}: replaying offsets {}..{}, which may have been stored before a crash",
              tp,
              c.offset(),
              b.replayEnd);
        }
      }
    }
  }
}
