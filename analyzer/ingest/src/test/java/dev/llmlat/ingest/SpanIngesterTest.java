package dev.llmlat.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.LlmlatTopics;
import dev.llmlat.store.ClickHouseStore;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.JdbcClickHouse;
import dev.llmlat.store.StoreConfig;
import dev.llmlat.store.confine.Confinement;
import dev.llmlat.store.http.ClickHouseHttpServer;
import dev.llmlat.store.schema.SchemaMigrator;
import dev.llmlat.testing.Await;
import dev.llmlat.testing.KafkaBrokerExtension;
import dev.llmlat.testing.SpanFixtures;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The ingester against a real Kafka 4.4 broker (child JVM) and the real engine. */
class SpanIngesterTest {
  @RegisterExtension static final KafkaBrokerExtension broker = new KafkaBrokerExtension();

  @TempDir Path storeDir;
  EmbeddedClickHouse store;
  String topic;

  @BeforeEach
  void openStore() {
    store = EmbeddedClickHouse.openConfined(storeDir, EngineLibrary.locate(), Confinement.STRICT);
    SchemaMigrator.bundled().migrate(store);
    topic = "spans_" + UUID.randomUUID().toString().substring(0, 8);
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SpanTopics.ensure(admin, topic, 1);
    }
  }

  @AfterEach
  void closeStore() {
    store.close();
  }

  IngesterConfig.Builder config() {
    return IngesterConfig.builder(broker.bootstrapServers())
        .topic(topic)
        .groupId("g-" + topic)
        .linger(Duration.ofMillis(100))
        .reportInterval(Duration.ZERO);
  }

  void produce(List<byte[]> values) {
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
            new StringSerializer(),
            new ByteArraySerializer())) {
      for (byte[] value : values) {
        producer.send(new ProducerRecord<>(topic, "key", value));
      }
    }
  }

  static long count(ClickHouseStore store, String sql) {
    return Long.parseLong(store.query(sql).single());
  }

  /** A GPU step span and one kernel span of it, as the GPU importers publish them. */
  static ExportTraceServiceRequest kernelBatch(String requestTraceId) {
    byte[] stepTrace = HexFormat.of().parseHex("11112222333344445555666677778888");
    Span step =
        Span.newBuilder()
            .setTraceId(ByteString.copyFrom(stepTrace))
            .setSpanId(ByteString.copyFrom(HexFormat.of().parseHex("aaaabbbbccccdddd")))
            .setName("step")
            .setStartTimeUnixNano(1_000_000_000L)
            .setEndTimeUnixNano(1_000_500_000L)
            .addLinks(
                Span.Link.newBuilder()
                    .setTraceId(ByteString.copyFrom(HexFormat.of().parseHex(requestTraceId)))
                    .setSpanId(ByteString.copyFrom(new byte[8])))
            .build();
    Span kernel =
        Span.newBuilder()
            .setTraceId(ByteString.copyFrom(stepTrace))
            .setSpanId(ByteString.copyFrom(HexFormat.of().parseHex("0000000000000001")))
            .setParentSpanId(step.getSpanId())
            .setName("ampere_sgemm_128x64_tn")
            .setStartTimeUnixNano(1_000_100_000L)
            .setEndTimeUnixNano(1_000_123_456L)
            .addAttributes(kv("llmlat.gpu.kind", AnyValue.newBuilder().setStringValue("kernel")))
            .addAttributes(kv("gpu.device.id", AnyValue.newBuilder().setIntValue(0)))
            .addAttributes(kv("gpu.stream.id", AnyValue.newBuilder().setIntValue(7)))
            .addAttributes(kv("cuda.correlation_id", AnyValue.newBuilder().setIntValue(4242)))
            .addAttributes(kv("thread.id", AnyValue.newBuilder().setIntValue(3131)))
            .addAttributes(
                kv("llmlat.step.span_id", AnyValue.newBuilder().setStringValue("aaaabbbbccccdddd")))
            .addAttributes(kv("llmlat.step.name", AnyValue.newBuilder().setStringValue("prefill")))
            .addAttributes(kv("llmlat.gpu.source", AnyValue.newBuilder().setStringValue("nsys")))
            .addAttributes(
                kv(
                    "llmlat.clock.rule",
                    AnyValue.newBuilder().setStringValue("nsys:session_start+start")))
            .build();
    return ExportTraceServiceRequest.newBuilder()
        .addResourceSpans(
            ResourceSpans.newBuilder()
                .setResource(
                    Resource.newBuilder()
                        .addAttributes(
                            kv("service.name", AnyValue.newBuilder().setStringValue("engine")))
                        .addAttributes(
                            kv("llmlat.layer", AnyValue.newBuilder().setStringValue("gpu")))
                        .addAttributes(
                            kv("host.name", AnyValue.newBuilder().setStringValue("gpu-host")))
                        .addAttributes(kv("process.pid", AnyValue.newBuilder().setIntValue(777))))
                .addScopeSpans(ScopeSpans.newBuilder().addSpans(step).addSpans(kernel)))
        .build();
  }

  static KeyValue kv(String k, AnyValue.Builder v) {
    return KeyValue.newBuilder().setKey(k).setValue(v).build();
  }

  @Test
  void storesEveryFieldAndRoutesKernelSpansToGpuKernels() throws Exception {
    produce(
        List.of(
            SpanFixtures.everyField().toByteArray(),
            kernelBatch(SpanFixtures.TRACE).toByteArray()));
    try (SpanIngester ingester = new SpanIngester(config().build(), store).start()) {
      Await.until(
          () ->
              ingester.metrics().snapshot().kernels() == 1
                  && ingester.metrics().snapshot().spans() == 2,
          "2 spans + 1 kernel");
    }
    SpanFixtures.assertEveryFieldStored(store);
    assertThat(
            store
                .query(
                    "SELECT SpanName, length(Links.TraceId) FROM otel_traces WHERE SpanName = 'step'")
                .rows())
        .containsExactly(List.of("step", "1"));
    assertThat(
            store
                .query(
                    "SELECT toUnixTimestamp64Nano(Start), DurationNs, Kind, Name, Device, Stream, CorrelationId,"
                        + " HostName, Pid, Tid, StepSpanId, StepName, Source, ClockRule, ServiceName FROM gpu_kernels")
                .rows())
        .containsExactly(
            List.of(
                "1000100000",
                "23456",
                "kernel",
                "ampere_sgemm_128x64_tn",
                "0",
                "7",
                "4242",
                "gpu-host",
                "777",
                "3131",
                "aaaabbbbccccdddd",
                "prefill",
                "nsys",
                "nsys:session_start+start",
                "engine"));
    // The requests a kernel served come from its step span's links.
    assertThat(store.query("SELECT Name, RequestTraceId FROM gpu_kernel_requests").rows())
        .containsExactly(List.of("ampere_sgemm_128x64_tn", SpanFixtures.TRACE));
    assertThat(
            count(
                store,
                "SELECT count() FROM otel_traces WHERE SpanAttributes['llmlat.gpu.kind'] != ''"))
        .isZero();
  }

  @Test
  void sendsUndecodableRecordsToTheDeadLetterTopicWithTheReason() throws Exception {
    byte[] garbage =
        "this is not protobuf at all \u0000\u00ff".getBytes(StandardCharsets.ISO_8859_1);
    byte[] wrongMessage =
        Span.newBuilder().setName("a bare span, not a request").build().toByteArray();
    produce(List.of(garbage, SpanFixtures.oneSpan(1), wrongMessage));
    try (SpanIngester ingester = new SpanIngester(config().build(), store).start()) {
      Await.until(
          () ->
              ingester.metrics().snapshot().records() == 3
                  && ingester.metrics().snapshot().spans() == 1,
          "3 records");
      assertThat(ingester.metrics().snapshot().deadLettered()).isEqualTo(2);
    }
    assertThat(count(store, "SELECT count() FROM otel_traces")).isEqualTo(1);
    List<ConsumerRecord<byte[], byte[]>> dead = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG,
                "dlq-reader",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(LlmlatTopics.deadLetterTopic(topic)));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (dead.size() < 2 && System.nanoTime() < deadline) {
        consumer.poll(Duration.ofMillis(200)).forEach(dead::add);
      }
    }
    assertThat(dead).hasSize(2);
    assertThat(dead.get(0).value()).isEqualTo(garbage);
    assertThat(dead.get(1).value()).isEqualTo(wrongMessage);
    assertThat(
            new String(
                dead.get(0).headers().lastHeader(LlmlatTopics.HEADER_REASON).value(),
                StandardCharsets.UTF_8))
        .startsWith("not an OTLP ExportTraceServiceRequest protobuf");
    assertThat(
            new String(
                dead.get(1).headers().lastHeader(LlmlatTopics.HEADER_REASON).value(),
                StandardCharsets.UTF_8))
        .startsWith("no spans in the record");
    assertThat(
            new String(
                dead.get(1).headers().lastHeader(LlmlatTopics.HEADER_OFFSET).value(),
                StandardCharsets.UTF_8))
        .isEqualTo("2");
  }

  @Test
  void aCrashBetweenInsertAndCommitDoesNotDuplicateRows() throws Exception {
    List<byte[]> values = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      values.add(SpanFixtures.oneSpan(i));
    }
    produce(values);
    SpanIngester first =
        new SpanIngester(config().maxBatchSpans(7).linger(Duration.ofHours(1)).build(), store);
    first.afterInsert(
        () -> {
          throw new IllegalStateException("killed between insert and commit");
        });
    first.start();
    assertThat(first.awaitStop(Duration.ofSeconds(60))).isTrue();
    assertThat(first.failure()).hasMessage("killed between insert and commit");
    assertThat(count(store, "SELECT count() FROM otel_traces"))
        .isEqualTo(7); // stored, never committed

    // a differently sized successor re-forms exactly the batch it finds pending
    try (SpanIngester second =
        new SpanIngester(config().maxBatchSpans(1000).build(), store).start()) {
      Await.until(
          () ->
              second.metrics().snapshot().records() == 40
                  && second.metrics().snapshot().pendingSpans() == 0
                  && second.metrics().snapshot().batches() >= 2,
          "40 records stored");
      assertThat(second.metrics().snapshot().replayedBatches()).isEqualTo(1);
    }
    assertThat(count(store, "SELECT count() FROM otel_traces")).isEqualTo(40);
    assertThat(count(store, "SELECT uniqExact(SpanId) FROM otel_traces")).isEqualTo(40);
    assertThat(committed("g-" + topic)).isEqualTo(new OffsetAndMetadata(40, ""));
  }

  @Test
  void aSmallerSuccessorReplaysTheCrashedBatchWhole() throws Exception {
    List<byte[]> values = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      values.add(SpanFixtures.oneSpan(i));
    }
    produce(values);
    SpanIngester first =
        new SpanIngester(config().maxBatchSpans(10).linger(Duration.ofHours(1)).build(), store);
    first.afterInsert(
        () -> {
          throw new IllegalStateException("killed between insert and commit");
        });
    first.start();
    assertThat(first.awaitStop(Duration.ofSeconds(60))).isTrue();
    assertThat(count(store, "SELECT count() FROM otel_traces"))
        .isEqualTo(10); // 0..9 stored, never committed

    // 0..9 must go again as one batch under its token: 0..2 under it would be dropped as the repeat
    // it
    // is, and 3..9 in batches of their own stored a second time
    try (SpanIngester successor =
        new SpanIngester(config().maxBatchSpans(3).build(), store).start()) {
      Await.until(
          () ->
              successor.metrics().snapshot().records() == 40
                  && successor.metrics().snapshot().pendingSpans() == 0,
          "40 records stored");
      assertThat(successor.metrics().snapshot().replayedBatches()).isEqualTo(1);
    }
    assertThat(count(store, "SELECT count() FROM otel_traces")).isEqualTo(40);
    assertThat(count(store, "SELECT uniqExact(SpanId) FROM otel_traces")).isEqualTo(40);
    assertThat(committed("g-" + topic)).isEqualTo(new OffsetAndMetadata(40, ""));
  }

  @Test
  void readsTheNextBatchWhileTheStoreInsertsAndCommitsOnlyWhatIsStored() throws Exception {
    List<byte[]> values = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      values.add(SpanFixtures.oneSpan(i));
    }
    produce(values);
    CountDownLatch open = new CountDownLatch(1);
    ClickHouseStore gated = new GatedStore(store, open);
    try (SpanIngester ingester =
        new SpanIngester(config().maxBatchSpans(10).linger(Duration.ofHours(1)).build(), gated)
            .start()) {
      // the first batch (offsets 0..9) is with the store; the loop reads the second, then waits:
      // two batches at most
      Await.until(() -> ingester.metrics().snapshot().records() == 20, "the second batch read");
      assertThat(ingester.metrics().snapshot().insertsInFlight()).isEqualTo(1);
      assertThat(ingester.metrics().snapshot().spans()).isZero();
      assertThat(ingester.metrics().snapshot().pendingSpans()).isEqualTo(20);
      assertThat(committed("g-" + topic))
          .isEqualTo(new OffsetAndMetadata(0, SpanIngester.PENDING + 9));
      assertThat(ingester.metrics().snapshot().records()).isEqualTo(20);
      open.countDown();
      Await.until(
          () ->
              ingester.metrics().snapshot().spans() == 40
                  && ingester.metrics().snapshot().pendingSpans() == 0,
          "40 spans stored");
      assertThat(ingester.metrics().snapshot().batches()).isEqualTo(4);
    }
    assertThat(count(store, "SELECT count() FROM otel_traces")).isEqualTo(40);
    assertThat(count(store, "SELECT uniqExact(SpanId) FROM otel_traces")).isEqualTo(40);
    assertThat(committed("g-" + topic)).isEqualTo(new OffsetAndMetadata(40, ""));
  }

  /** The store, with inserts held until {@code open} opens. */
  record GatedStore(ClickHouseStore store, CountDownLatch open) implements ClickHouseStore {
    @Override
    public void insertRowBinary(
        String table, List<String> columns, byte[] rows, String deduplicationToken) {
      try {
        open.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      store.insertRowBinary(table, columns, rows, deduplicationToken);
    }

    @Override
    public void execute(String sql) {
      store.execute(sql);
    }

    @Override
    public dev.llmlat.store.QueryResult query(String sql, Map<String, ?> params) {
      return store.query(sql, params);
    }

    @Override
    public byte[] queryRowBinary(String sql, Map<String, ?> params) {
      return store.queryRowBinary(sql, params);
    }

    @Override
    public String description() {
      return store.description();
    }

    @Override
    public void close() {}
  }

  @Test
  void closeWritesAndCommitsWhatItHolds() throws Exception {
    produce(List.of(SpanFixtures.oneSpan(1), SpanFixtures.oneSpan(2), SpanFixtures.oneSpan(3)));
    SpanIngester ingester =
        new SpanIngester(config().linger(Duration.ofHours(1)).build(), store).start();
    Await.until(() -> ingester.metrics().snapshot().records() == 3, "3 records read");
    assertThat(count(store, "SELECT count() FROM otel_traces")).isZero(); // still batching
    ingester.close();
    assertThat(ingester.failure()).isNull();
    assertThat(count(store, "SELECT count() FROM otel_traces")).isEqualTo(3);
    assertThat(committed("g-" + topic)).isEqualTo(new OffsetAndMetadata(3, ""));
  }

  @Test
  void writesThroughTheOfficialDriverToo() throws Exception {
    produce(List.of(SpanFixtures.everyField().toByteArray()));
    try (ClickHouseHttpServer http = ClickHouseHttpServer.start(store, 0);
        JdbcClickHouse server = JdbcClickHouse.open(StoreConfig.server(http.url(), null, null));
        SpanIngester ingester = new SpanIngester(config().build(), server).start()) {
      Await.until(() -> ingester.metrics().snapshot().spans() == 1, "1 span");
      SpanFixtures.assertEveryFieldStored(server);
    }
  }

  OffsetAndMetadata committed(String group) throws Exception {
    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      return admin
          .listConsumerGroupOffsets(group)
          .partitionsToOffsetAndMetadata()
          .get()
          .get(new TopicPartition(topic, 0));
    }
  }
}
