package dev.llmlat.bench.faults;

import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.spans.OtlpRecordDecoder;
import dev.llmlat.ingest.spans.SpanRouter;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.semconv.LlmlatTopics;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Random and mutated bytes on the span topic: each record must either reach the dead-letter topic
 * with a reason or be stored as the decoder reads it, and the ingester must stay alive. Record
 * {@code i} is a pure function of (seed, i), so a failing one is rebuilt from the seed, and is also
 * kept as a file under the scratch directory.
 */
final class FuzzedRecords {
  static final String NAME = "fuzz";
  static final String HEADER = "llmlat.fuzz.index";

  private final int records;
  private final long seed;
  private final Path keep;
  private final List<byte[]> valid;

  FuzzedRecords(int records, long seed, Path keep) {
    this.records = records;
    this.seed = seed;
    this.keep = keep;
    DemoTraces traces = new DemoTraces(seed, 1_795_946_400_000_000_000L);
    this.valid = new ArrayList<>();
    SpanBatch batch = SpanBatch.of(traces.generate(64, new ArrayList<>()));
    for (int i = 0; i < batch.recordCount(); i++) {
      valid.add(batch.record(i));
    }
  }

  /**
   * Record {@code i}: 40% random bytes, 50% a valid record mutated 1-8 times, 10% a valid record as
   * it is.
   */
  byte[] record(int i) {
    Random r = new Random(seed * 1_000_003L + i);
    int kind = r.nextInt(10);
    if (kind < 4) {
      byte[] b = new byte[r.nextInt(r.nextBoolean() ? 64 : 4096)];
      r.nextBytes(b);
      return b;
    }
    byte[] b = valid.get(r.nextInt(valid.size())).clone();
    if (kind == 9) {
      return b;
    }
    for (int m = 1 + r.nextInt(8); m > 0 && b.length > 0; m--) {
      int at = r.nextInt(b.length);
      switch (r.nextInt(6)) {
        case 0 -> b[at] ^= (byte) (1 << r.nextInt(8)); // bit flip
        case 1 -> b[at] = (byte) r.nextInt(256); // random byte
        case 2 -> b[at] = (byte) (r.nextBoolean() ? 0 : 0xff); // extreme byte (lengths, varints)
        case 3 -> b = Arrays.copyOf(b, at); // truncation
        case 4 -> { // insertion of random bytes
          byte[] ins = new byte[1 + r.nextInt(16)];
          r.nextBytes(ins);
          byte[] n = new byte[b.length + ins.length];
          System.arraycopy(b, 0, n, 0, at);
          System.arraycopy(ins, 0, n, at, ins.length);
          System.arraycopy(b, at, n, at + ins.length, b.length - at);
          b = n;
        }
        default -> { // a slice repeated
          int len = Math.min(b.length - at, 1 + r.nextInt(64));
          byte[] n = new byte[b.length + len];
          System.arraycopy(b, 0, n, 0, at + len);
          System.arraycopy(b, at, n, at + len, b.length - at);
          b = n;
        }
      }
    }
    return b;
  }

  FaultResult run(FaultRig rig, PrintWriter log) throws IOException, InterruptedException {
    log.printf("  %s: %,d records, seed %d%n", NAME, records, seed);
    log.flush();
    long pid = rig.ingester().pid();
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, rig.bootstrap());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < records; i++) {
        ProducerRecord<byte[], byte[]> record =
            new ProducerRecord<>(LlmlatTopics.SPANS, null, record(i));
        record.headers().add(HEADER, Integer.toString(i).getBytes(StandardCharsets.UTF_8));
        producer.send(record);
      }
      producer.flush();
    }
    List<String> problems = new ArrayList<>();
    try {
      rig.awaitDrained(Duration.ofMinutes(5));
    } catch (IllegalStateException e) {
      problems.add(e.getMessage().lines().findFirst().orElse(""));
    }
    if (!rig.ingester().isAlive() || rig.ingester().pid() != pid) {
      problems.add("the ingester died (see " + rig.ingesterLog() + ")");
    }

    Map<Integer, String> reasons = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> d : rig.readAll(LlmlatTopics.DEAD_LETTERS)) {
      Header index = d.headers().lastHeader(HEADER);
      Header reason = d.headers().lastHeader(LlmlatTopics.HEADER_REASON);
      int i = Integer.parseInt(new String(index.value(), StandardCharsets.UTF_8));
      String why = reason == null ? "" : new String(reason.value(), StandardCharsets.UTF_8);
      if (why.isBlank()) {
        problems.add("record " + i + " dead-lettered without a reason");
        keep(i);
      }
      if (reasons.put(i, why) != null) {
        problems.add("record " + i + " dead-lettered twice");
      }
    }
    long expectedSpans = 0;
    long expectedKernels = 0;
    long ingestedRecords = 0;
    long unexplained = 0;
    for (int i = 0; i < records; i++) {
      byte[] value = record(i);
      SpanRouter rows = null;
      try {
        rows = new SpanRouter().add(OtlpRecordDecoder.decode(value));
      } catch (OtlpRecordDecoder.InvalidRecordException | RuntimeException e) {
        // not a span batch: must be in the dead-letter topic
      }
      if (reasons.containsKey(i)) {
        if (rows != null) {
          problems.add("record " + i + " decodes but was dead-lettered: " + reasons.get(i));
          keep(i);
        }
      } else if (rows == null) {
        unexplained++;
        keep(i);
      } else {
        ingestedRecords++;
        expectedSpans += rows.spans();
        expectedKernels += rows.kernels();
      }
    }
    if (unexplained > 0) {
      problems.add(
          unexplained
              + " undecodable records neither dead-lettered nor stored (kept under "
              + keep
              + ")");
    }
    long spans = rig.count("otel_traces");
    long kernels = rig.count("gpu_kernels");
    rig.stopIngester();
    long expected = expectedSpans + expectedKernels;
    long stored = spans + kernels;
    Map<String, String> figures = new LinkedHashMap<>();
    figures.put("records", Integer.toString(records));
    figures.put("ingested_records", Long.toString(ingestedRecords));
    figures.put("dlq_plus_ingested", Long.toString(reasons.size() + ingestedRecords));
    figures.put(
        "ingester_alive", Boolean.toString(problems.stream().noneMatch(s -> s.contains("died"))));
    figures.put("seed", Long.toString(seed));
    if (reasons.size() + ingestedRecords != records) {
      problems.add("dlq + ingested = " + (reasons.size() + ingestedRecords) + ", sent " + records);
    }
    return new FaultResult(
        NAME,
        expected,
        Math.min(stored, expected),
        Math.max(0, expected - stored),
        Math.max(0, stored - expected),
        reasons.size(),
        figures,
        problems);
  }

  private void keep(int i) throws IOException {
    Files.createDirectories(keep);
    Files.write(keep.resolve("seed-" + seed + "-record-" + i + ".bin"), record(i));
  }

  /** Where failing records are kept. */
  Path kept() {
    return keep;
  }
}
