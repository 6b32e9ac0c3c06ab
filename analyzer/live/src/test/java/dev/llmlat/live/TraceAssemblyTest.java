package dev.llmlat.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmlat.analyze.otlp.OtlpSpanRecords;
import dev.llmlat.analyze.store.Analyzer;
import dev.llmlat.attribution.TraceAttribution;
import dev.llmlat.demo.DemoTraces;
import dev.llmlat.ingest.spans.SpanRouter;
import dev.llmlat.live.internal.LiveMetrics;
import dev.llmlat.live.internal.LiveTopology;
import dev.llmlat.live.internal.TraceAssembler;
import dev.llmlat.otlpkafka.SpanBatch;
import dev.llmlat.runtime.home.EngineLibrary;
import dev.llmlat.semconv.TtftComponent;
import dev.llmlat.store.EmbeddedClickHouse;
import dev.llmlat.store.schema.SchemaMigrator;
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
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live topology on Kafka Streams' test driver (wall-clock time is the driver's: no sleeps) over
 * the real embedded store: completion by grace, rows equal to {@code analyze}'s on the same spans,
 * late spans re-attributing, retention dropping state, clock evidence across traces.
 */
class TraceAssemblyTest {
  static final String TOPIC = "otlp_spans";
  static final Duration GRACE = Duration.ofSeconds(2);
  static final Duration RETENTION = Duration.ofMinutes(1);
  static final Duration TICK = Duration.ofMillis(400); // LiveConfig's punctuation for a 2 s grace
  static final long MS = 1_000_000L;

  @TempDir static Path storeDir;
  static EmbeddedClickHouse store;
  @TempDir Path stateDir;
  TopologyTestDriver driver;
  TestInputTopic<byte[], byte[]> input;
  LiveMetrics metrics;

  @BeforeAll
  static void openStore() {
    store = EmbeddedClickHouse.open(storeDir.resolve("ch"), EngineLibrary.locate());
    SchemaMigrator.bundled().migrate(store);
  }

  @AfterAll
  static void closeStore() {
    store.close();
  }

  @BeforeEach
  void startDriver() {
    metrics = new LiveMetrics();
    // the driver runs one task: one partition
    TraceAssembler.Settings settings =
        new TraceAssembler.Settings(GRACE, RETENTION, 1, TICK, 64, LiveAttributor.VERSION);
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, "live-test");
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    driver =
        new TopologyTestDriver(
            LiveTopology.build(TOPIC, settings, store, metrics),
            p,
            Instant.ofEpochMilli(1_000_000));
    input = driver.createInputTopic(TOPIC, new ByteArraySerializer(), new ByteArraySerializer());
  }

  @AfterEach
  void stopDriver() {
    driver.close();
  }

  void send(ExportTraceServiceRequest request) {
    SpanBatch batch = SpanBatch.of(request);
    for (int i = 0; i < batch.recordCount(); i++) {
      input.pipeInput(batch.traceId(i).getBytes(StandardCharsets.UTF_8), batch.record(i));
    }
  }

  /** Sends the request's records stamped as sent at {@code sent}. */
  void send(ExportTraceServiceRequest request, Instant sent) {
    SpanBatch batch = SpanBatch.of(request);
    for (int i = 0; i < batch.recordCount(); i++) {
      input.pipeInput(batch.traceId(i).getBytes(StandardCharsets.UTF_8), batch.record(i), sent);
    }
  }

  /**
   * Lets wall-clock time pass as it does, a punctuation at a time (a task that read nothing for a
   * grace of them is idle).
   */
  void advance(Duration d) {
    for (Duration left = d; !left.isZero(); ) {
      Duration step = left.compareTo(TICK) < 0 ? left : TICK;
      driver.advanceWallClockTime(step);
      left = left.minus(step);
    }
  }

  static String in(List<DemoTraces.Request> requests) {
    return DemoTraces.sqlList(requests);
  }

  /**
   * Live's (or analyze's) rows of these requests in FINAL: trace id -> TTFT, start layer, adapter,
   * components.
   */
  static Map<String, List<String>> rows(List<DemoTraces.Request> requests) {
    Map<String, List<String>> out = new java.util.TreeMap<>();
    String components =
        String.join(", ", TtftComponent.all().stream().map(TtftComponent::column).toList());
    for (List<String> r :
        store
            .query(
                "SELECT TraceId, TtftNs, TtftStartLayer, EngineAdapter, "
                    + components
                    + " FROM llm_request_attribution FINAL WHERE TraceId IN "
                    + in(requests))
            .rows()) {
      out.put(r.get(0), r.subList(1, r.size()));
    }
    return out;
  }

  static long count(String sql) {
    return Long.parseLong(store.query(sql).single());
  }

  @Test
  void aTraceIsAttributedOnceItsGraceHasPassedAndEqualsWhatAnalyzeComputes() {
    long base = 1_795_946_400_000_000_000L;
    List<DemoTraces.Request> requests = new ArrayList<>();
    ExportTraceServiceRequest spans = new DemoTraces(7, base).generate(40, requests);
    send(spans);

    advance(GRACE.minusMillis(1));
    assertThat(
            count("SELECT count() FROM llm_request_attribution WHERE TraceId IN " + in(requests)))
        .as("nothing before the grace has passed")
        .isZero();
    assertThat(metrics.waiting()).isEqualTo(40);
    advance(TICK);
    Map<String, List<String>> live = rows(requests);
    assertThat(live).hasSize(40);
    assertThat(
            count("SELECT count() FROM llm_request_attribution WHERE TraceId IN " + in(requests)))
        .isEqualTo(40);
    assertThat(
            store
                .query(
                    "SELECT DISTINCT AnalyzerVersion FROM llm_request_attribution WHERE TraceId IN "
                        + in(requests))
                .single())
        .isEqualTo(LiveAttributor.VERSION);
    assertThat(metrics.waiting()).isZero();
    assertThat(metrics.snapshot().rowsWritten()).isEqualTo(40);

    // the same spans through the store path: analyze's rows (newer) replace live's, and are the
    // same
    new SpanRouter().add(spans).insertInto(store, null);
    assertThat(new Analyzer(store).analyze(base - 1_000 * MS, base + 60_000 * MS, false).written())
        .isEqualTo(40);
    assertThat(
            store
                .query(
                    "SELECT DISTINCT AnalyzerVersion FROM llm_request_attribution FINAL WHERE TraceId IN "
                        + in(requests))
                .single())
        .isEqualTo(Analyzer.VERSION);
    assertThat(rows(requests)).isEqualTo(live);
    // shared spans (GPU steps of two requests) reached both, the prefill steps made it into the
    // components
    assertThat(live.values()).allSatisfy(r -> assertThat(r.get(1)).isEqualTo("gateway"));
    assertThat(
            count(
                "SELECT countIf(PrefillGpuNs > 0) FROM llm_request_attribution FINAL WHERE TraceId IN "
                    + in(requests)))
        .isEqualTo(40);
  }

  @Test
  void aLateSpanAttributesTheTraceAgainAndTheNewRowReplacesTheOld() {
    long base = 1_795_946_500_000_000_000L;
    List<DemoTraces.Request> requests = new ArrayList<>();
    ExportTraceServiceRequest spans = new DemoTraces(8, base).generate(4, requests);
    // the gateway's exporter is late: engine and GPU first
    send(spans.toBuilder().removeResourceSpans(0).build());
    advance(GRACE.plus(TICK));
    assertThat(rows(requests).values())
        .hasSize(4)
        .allSatisfy(r -> assertThat(r.get(1)).isEqualTo("engine"));
    String versions =
        "SELECT max(AnalyzedAt) FROM llm_request_attribution FINAL WHERE TraceId IN "
            + in(requests);
    String first = store.query(versions).single();

    send(
        ExportTraceServiceRequest.newBuilder().addResourceSpans(spans.getResourceSpans(0)).build());
    advance(GRACE.plus(TICK));
    Map<String, List<String>> after = rows(requests);
    assertThat(after.values())
        .hasSize(4)
        .allSatisfy(r -> assertThat(r.get(1)).isEqualTo("gateway"));
    assertThat(store.query(versions).single())
        .as("the newer row replaced the older")
        .isGreaterThanOrEqualTo(first);
    assertThat(metrics.snapshot().lateReattributions()).isEqualTo(4);
    assertThat(metrics.snapshot().attributions()).isEqualTo(8);
  }

  @Test
  void whileABacklogIsReadATraceWaitsForTheSpansSentWithinItsGraceHoweverLongTheReadingTakes() {
    long base = 1_795_946_550_000_000_000L;
    List<DemoTraces.Request> requests = new ArrayList<>();
    ExportTraceServiceRequest spans = new DemoTraces(21, base).generate(4, requests);
    ExportTraceServiceRequest others =
        new DemoTraces(22, base + 60_000 * MS).generate(30, new ArrayList<>());
    Instant sent = Instant.ofEpochMilli(1_795_946_550_000L);
    // a backlog: the engine's spans, then other requests' records sent 50 ms later and read over
    // many graces of wall clock, then the gateway's spans, sent 100 ms after the engine's
    send(spans.toBuilder().removeResourceSpans(0).build(), sent);
    SpanBatch backlog = SpanBatch.of(others);
    for (int i = 0; i < backlog.recordCount(); i++) {
      input.pipeInput(
          backlog.traceId(i).getBytes(StandardCharsets.UTF_8),
          backlog.record(i),
          sent.plusMillis(50));
      advance(TICK);
    }
    assertThat(
            count("SELECT count() FROM llm_request_attribution WHERE TraceId IN " + in(requests)))
        .as("no trace is complete before a grace has passed in what was read")
        .isZero();
    send(
        ExportTraceServiceRequest.newBuilder().addResourceSpans(spans.getResourceSpans(0)).build(),
        sent.plusMillis(100));
    advance(GRACE.plus(TICK));
    assertThat(rows(requests).values())
        .hasSize(4)
        .allSatisfy(r -> assertThat(r.get(1)).isEqualTo("gateway"));
    assertThat(metrics.snapshot().attributions()).isEqualTo(34);
    assertThat(metrics.snapshot().lateReattributions())
        .as("each attributed once, with its gateway's spans")
        .isZero();
  }

  @Test
  void retentionDropsEveryTraceAndItsSharedSpansAndStepsAloneAreNeverAttributed() {
    long base = 1_795_946_600_000_000_000L;
    List<DemoTraces.Request> requests = new ArrayList<>();
    ExportTraceServiceRequest spans = new DemoTraces(9, base).generate(6, requests);
    // the GPU layer alone: steps, no request
    send(
        ExportTraceServiceRequest.newBuilder().addResourceSpans(spans.getResourceSpans(2)).build());
    advance(GRACE.multipliedBy(4));
    assertThat(rows(requests)).isEmpty();
    assertThat(entries(TraceAssembler.SHARED))
        .as("each GPU step once")
        .isEqualTo(spans.getResourceSpans(2).getScopeSpans(0).getSpansCount());
    send(spans.toBuilder().removeResourceSpans(2).build());
    advance(GRACE.plus(TICK));
    assertThat(rows(requests)).hasSize(6);
    assertThat(entries(TraceAssembler.TRACES)).isEqualTo(6);

    advance(RETENTION);
    for (String store :
        List.of(
            TraceAssembler.TRACES,
            TraceAssembler.SPANS,
            TraceAssembler.SHARED,
            TraceAssembler.TIMERS)) {
      assertThat(entries(store)).as(store + " after the retention").isZero();
    }
    assertThat(metrics.snapshot().expiredWithoutRequest()).isZero();
    assertThat(metrics.held()).isZero();
  }

  @Test
  void clockEvidenceFromEarlierTracesCorrectsASkewOneTraceAloneCannotShow() {
    long base = 1_795_946_700_000_000_000L;
    long skew = 1_500_000; // the engine host's clock runs 1.5 ms ahead
    List<DemoTraces.Request> requests = new ArrayList<>();
    ExportTraceServiceRequest spans =
        onEngineHost(new DemoTraces(10, base).generate(12, requests), skew);
    SpanBatch batch = SpanBatch.of(spans);
    List<ExportTraceServiceRequest> byTrace = batch.requests();
    for (ExportTraceServiceRequest trace : byTrace) {
      send(trace);
      advance(GRACE.plus(TICK)); // attributed one by one, each with the evidence before it
    }
    List<List<String>> corrections =
        store
            .query(
                "SELECT TraceId, toString(ClockCorrections) FROM llm_request_attribution FINAL"
                    + " WHERE TraceId IN "
                    + in(requests)
                    + " ORDER BY ArrivalTime")
            .rows();
    assertThat(corrections).hasSize(12);
    // one round trip is too thin to move a clock by 1.75 ms (its margin is 1% of the exchange): not
    // applied
    assertThat(corrections.get(0).get(1)).isEqualTo("{}");
    assertThat(TraceAttribution.attribute(OtlpSpanRecords.of(byTrace.get(11))).get(0).corrections())
        .noneMatch(dev.llmlat.attribution.ClockCorrection::applied);
    // eight and more are strong evidence: the later traces are aligned
    assertThat(corrections.subList(9, 12))
        .allSatisfy(r -> assertThat(r.get(1)).isEqualTo("{'engine-host':-1750000}"));
  }

  @Test
  void gpuSpansImportedIntoTheStoreAfterTheRunAreTakenUpByAnalyzeAll() {
    long base = 1_795_946_800_000_000_000L;
    List<DemoTraces.Request> requests = new ArrayList<>();
    ExportTraceServiceRequest spans = new DemoTraces(11, base).generate(6, requests);
    ExportTraceServiceRequest withoutGpu = spans.toBuilder().removeResourceSpans(2).build();
    send(withoutGpu);
    advance(GRACE.plus(TICK));
    String prefillCpu =
        "SELECT countIf(PrefillCpuNs > 0) FROM llm_request_attribution FINAL WHERE TraceId IN "
            + in(requests);
    assertThat(rows(requests)).hasSize(6);
    assertThat(count(prefillCpu))
        .as("without GPU steps the engine's prefill counts as GPU time")
        .isZero();

    // the ingester stored the same spans; a GPU export is imported into the store afterwards
    new SpanRouter().add(withoutGpu).insertInto(store, null);
    new SpanRouter()
        .add(
            ExportTraceServiceRequest.newBuilder()
                .addResourceSpans(spans.getResourceSpans(2))
                .build())
        .insertInto(store, null);
    Analyzer analyzer = new Analyzer(store);
    assertThat(analyzer.analyze(base - 1_000 * MS, base + 60_000 * MS, true).written())
        .as("plain `analyze` takes only requests without a row")
        .isZero();
    assertThat(analyzer.analyze(base - 1_000 * MS, base + 60_000 * MS, false).written())
        .as("`analyze --all`")
        .isEqualTo(6);
    assertThat(count(prefillCpu))
        .as("the GPU steps split the prefill into launch and GPU time")
        .isEqualTo(6);
  }

  /** The engine and GPU layers on a host of their own whose clock is {@code skewNs} ahead. */
  static ExportTraceServiceRequest onEngineHost(ExportTraceServiceRequest request, long skewNs) {
    ExportTraceServiceRequest.Builder out = request.toBuilder();
    for (int r = 1; r < out.getResourceSpansCount(); r++) {
      ResourceSpans.Builder rs = out.getResourceSpansBuilder(r);
      Resource.Builder resource = rs.getResourceBuilder();
      for (int a = 0; a < resource.getAttributesCount(); a++) {
        if (resource.getAttributes(a).getKey().equals("host.name")) {
          resource.setAttributes(
              a,
              KeyValue.newBuilder()
                  .setKey("host.name")
                  .setValue(AnyValue.newBuilder().setStringValue("engine-host")));
        }
      }
      for (ScopeSpans.Builder ss : rs.getScopeSpansBuilderList()) {
        for (Span.Builder s : ss.getSpansBuilderList()) {
          s.setStartTimeUnixNano(s.getStartTimeUnixNano() + skewNs)
              .setEndTimeUnixNano(s.getEndTimeUnixNano() + skewNs);
          for (Span.Event.Builder e : s.getEventsBuilderList()) {
            e.setTimeUnixNano(e.getTimeUnixNano() + skewNs);
          }
        }
      }
    }
    return out.build();
  }

  long entries(String name) {
    KeyValueStore<Bytes, byte[]> kv = driver.getKeyValueStore(name);
    long n = 0;
    try (KeyValueIterator<Bytes, byte[]> all = kv.all()) {
      while (all.hasNext()) {
        all.next();
        n++;
      }
    }
    return n;
  }
}
