package dev.llmlat.bench;

import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.IngesterConfig;
import dev.llmlat.ingest.SpanIngester;
import dev.llmlat.ingest.spans.OtelTracesRowEncoder;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.otlpkafka.SpanPublisher;
import dev.llmlat.otlpkafka.SpanTopics;
import dev.llmlat.services.KafkaBroker;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * End-to-end ingest throughput (produce → broker → ingester → store) next to its two ceilings
 * measured in the same run on the same spans: the store's raw insert rate and the broker's raw
 * consume rate. A real broker (child JVM) and the embedded store in a scratch directory.
 */
public final class IngestBenchmark {
  /** The figures of one run. */
  public record Result(
      long spans,
      long records,
      long bytes,
      double endToEndSpansPerSec,
      double storeInsertSpansPerSec,
      double brokerConsumeSpansPerSec,
      double produceSpansPerSec) {}

  private final int spans;
  private final Path scratch;
  private final Path engineLibrary;
  private final int partitions;

  public IngestBenchmark(int spans, int partitions, Path scratch, Path engineLibrary) {
    if (spans < 1000) {
      throw new IllegalArgumentException("--spans must be at least 1000, got " + spans);
    }
    this.spans = spans;
    this.partitions = partitions;
    this.scratch = scratch;
    this.engineLibrary = engineLibrary;
  }

  public Result run(PrintWriter log) throws IOException, InterruptedException {
    Files.createDirectories(scratch);
    List<ExportTraceServiceRequest> batches = new ArrayList<>();
    List<byte[]> values = new ArrayList<>();
    long spanCount = 0;
    long bytes = 0;
    DemoTraces traces = new DemoTraces(7, 1_795_946_400_000_000_000L);
    while (spanCount < spans) {
      ExportTraceServiceRequest batch = traces.generate(200, new ArrayList<>());
      batches.add(batch);
      SpanBatch perTrace = SpanBatch.of(batch);
      for (int i = 0; i < perTrace.recordCount(); i++) {
        byte[] v = perTrace.record(i);
        values.add(v);
        bytes += v.length;
      }
      spanCount += SpanPublisher.spanCount(batch);
    }
    log.printf(
        "spans: %,d in %,d records (%,.1f MB of OTLP protobuf)%n",
        spanCount, values.size(), bytes / 1e6);
    log.flush();
    KafkaBroker broker =
        KafkaBroker.start(
            new KafkaBroker.Config(
                scratch.resolve("kafka"),
                scratch.resolve("kafka.log"),
                scratch.resolve("kafka.pid"),
                0,
                0));
    try (EmbeddedClickHouse store =
            EmbeddedClickHouse.open(scratch.resolve("clickhouse"), engineLibrary);
        Admin admin =
            Admin.create(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      SchemaMigrator.bundled().migrate(store);
      SpanTopics.ensure(admin, "bench_raw", partitions);
      SpanTopics.ensure(admin, "bench_e2e", partitions);

      // 1. broker: produce, then a plain consumer reading everything back (no decoding)
      long t0 = System.nanoTime();
      produce(broker.bootstrapServers(), "bench_raw", batches);
      double produceRate = spanCount / seconds(t0);
      t0 = System.nanoTime();
      long consumed = consumeAll(broker.bootstrapServers(), "bench_raw", values.size());
      double consumeRate = spanCount / seconds(t0);
      log.printf(
          "broker raw consume:  %,12.0f spans/s  (%,d records; produce %,.0f spans/s)%n",
          consumeRate, consumed, produceRate);
      log.flush();

      // 2. store: the same spans, encoded beforehand, inserted in batches as large as the
      // ingester's
      List<byte[]> encoded = new ArrayList<>();
      OtelTracesRowEncoder encoder = new OtelTracesRowEncoder();
      for (ExportTraceServiceRequest batch : batches) {
        encoder.add(batch);
        if (encoder.rows() >= 50_000) {
          encoded.add(encoder.toByteArray());
          encoder = new OtelTracesRowEncoder();
        }
      }
      if (encoder.rows() > 0) {
        encoded.add(encoder.toByteArray());
      }
      t0 = System.nanoTime();
      for (byte[] rows : encoded) {
        store.insertRowBinary(OtelTracesRowEncoder.TABLE, OtelTracesRowEncoder.COLUMNS, rows, null);
      }
      double insertRate = spanCount / seconds(t0);
      check(store, spanCount);
      log.printf(
          "store raw insert:    %,12.0f spans/s  (%d RowBinary inserts)%n",
          insertRate, encoded.size());
      log.flush();
      store.execute("TRUNCATE TABLE otel_traces");

      // 3. end to end: the ingester running, then produce; done when every span is stored
      SpanIngester ingester =
          new SpanIngester(
                  IngesterConfig.builder(broker.bootstrapServers())
                      .topic("bench_e2e")
                      .groupId("bench")
                      .linger(Duration.ofMillis(200))
                      .reportInterval(Duration.ZERO)
                      .build(),
                  store)
              .start();
      try {
        t0 = System.nanoTime();
        produce(broker.bootstrapServers(), "bench_e2e", batches);
        while (ingester.metrics().snapshot().spans() < spanCount) {
          if (ingester.failure() != null) {
            throw new IllegalStateException(
                "the ingester failed: " + ingester.failure(), ingester.failure());
          }
          Thread.sleep(2);
        }
      } finally {
        ingester.close();
      }
      double e2eRate = spanCount / seconds(t0);
      check(store, spanCount);
      log.printf(
          "end to end:          %,12.0f spans/s  (produce -> broker -> ingester -> store, %d batches)%n",
          e2eRate, ingester.metrics().snapshot().batches());
      log.printf(
          "ratios: end-to-end / store insert = %.2f, end-to-end / broker consume = %.2f%n",
          e2eRate / insertRate, e2eRate / consumeRate);
      log.flush();
      return new Result(
          spanCount, values.size(), bytes, e2eRate, insertRate, consumeRate, produceRate);
    } finally {
      broker.stop(Duration.ofSeconds(20));
      dev.llmlat.services.ChildJvm.deleteRecursively(scratch);
    }
  }

  private static void produce(
      String bootstrap, String topic, List<ExportTraceServiceRequest> batches) {
    try (SpanPublisher publisher = new SpanPublisher(bootstrap, topic)) {
      for (ExportTraceServiceRequest batch : batches) {
        publisher.publish(batch);
      }
      publisher.flush();
    }
  }

  private static long consumeAll(String bootstrap, String topic, long expected) {
    Map<String, Object> p = new HashMap<>();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-raw");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    long n = 0;
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      while (n < expected && System.nanoTime() < deadline) {
        n += consumer.poll(Duration.ofMillis(100)).count();
      }
    }
    if (n < expected) {
      throw new IllegalStateException(
          "consumed " + n + " of " + expected + " records within 5 minutes");
    }
    return n;
  }

  private static void check(EmbeddedClickHouse store, long expected) {
    long stored = Long.parseLong(store.query("SELECT count() FROM otel_traces").single());
    if (stored != expected) {
      throw new IllegalStateException("the store holds " + stored + " spans, expected " + expected);
    }
  }

  private static double seconds(long t0) {
    return (System.nanoTime() - t0) / 1e9;
  }
}
